"""What a workflow has spent, by kind (``units``, ``tool_calls``...), with the log as the truth.

The runtime knows no prices and no limits: an application's node says what an attempt spent
(:meth:`NodeContext.spend`), and the runtime records it under ``spent`` in the event that ends
the attempt (node_output, node_failed, interrupted). A caller may also record what the turn
that started or woke a workflow spent (``Runtime.start``/``resume`` with ``spent``). Replay
sums every event's ``spent``: a resumed workflow, here or on another replica, knows what it
already spent without a second store.

While attempts run, their spending is also in the workflow's :class:`Tally` (one per
execution, shared by the attempts running in parallel), so that a limit checked by one node
sees what its siblings just spent. An attempt killed mid-run (kill -9) loses the record of what
it spent since its last event; the tally of the process that ran it knew it, the log does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

SPENT_FIELD: Final = "spent"
"""The key of an event's data under which what it paid for is recorded."""


def spent_in(data: Mapping[str, Any]) -> dict[str, int]:
    """What one event's data records as spent (nothing, for events that paid for nothing)."""
    spent = data.get(SPENT_FIELD)
    if not isinstance(spent, Mapping):
        return {}
    return {str(k): int(v) for k, v in spent.items() if isinstance(v, int) and v}


def add_into(totals: dict[str, int], spent: Mapping[str, int]) -> None:
    for kind, amount in spent.items():
        totals[kind] = totals.get(kind, 0) + amount


class Tally:
    """A workflow's spending: ``recorded`` (summed from its log, kept current by the state it
    is shared with) plus ``running`` (what attempts in flight spent and have not recorded)."""

    def __init__(self, recorded: dict[str, int] | None = None) -> None:
        self.recorded = recorded if recorded is not None else {}
        self.running: dict[str, int] = {}

    def total(self, kind: str) -> int:
        return self.recorded.get(kind, 0) + self.running.get(kind, 0)

    def snapshot(self) -> dict[str, int]:
        totals = dict(self.recorded)
        add_into(totals, self.running)
        return {k: v for k, v in totals.items() if v}

    def settle(self, spent: Mapping[str, int]) -> None:
        """An attempt's spending is going into the log: it no longer counts as running."""
        add_into(self.running, {k: -v for k, v in spent.items()})
