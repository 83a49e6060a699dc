"""The machine-readable facts of a workflow log event, for the status message that reports it.

An agent that reports its workflow's progress in A2A status messages (a durable agent: a text
line per step) puts these facts beside the text, as one DataPart
``{"dev.accord/workflowEvent": {"event", "node", "at", "seq", "started"?}}``, so that any reader
(the web console's graph, the CLI, another client) has each step's time from the log, live
and when the task is read back later. ``at`` is the event's time in the log (ISO 8601, UTC);
``started`` (on ``node_output`` and ``node_failed``) is when that run of the node started, also
when its start had no status message of its own.

The key is the workflow runtime's, not the wire contract's (``accord.contracts.keys``): only
agents built on this runtime send it, it is optional, and a reader without it loses only the
times.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from accord.runtime.workflow.events import EventType, LogEvent

WORKFLOW_EVENT_KEY: Final = "dev.accord/workflowEvent"
"""Key of the facts in the DataPart of a status message that reports a workflow event."""

_ENDS_A_RUN: Final = frozenset({EventType.NODE_OUTPUT, EventType.NODE_FAILED})


def iso_time(at: float) -> str:
    """A log time (seconds since the epoch) as ISO 8601 UTC with milliseconds, ``Z``-suffixed
    as A2A writes its timestamps."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class EventFacts:
    """Folds a workflow's events in log order and gives the facts of any of them.

    Both ways an agent turns its log into status messages use it the same way (every event
    ``seen``, in order; ``of`` the ones it reports), so the live stream and a later read carry
    the same facts."""

    def __init__(self) -> None:
        self._started: dict[str, float] = {}

    def seen(self, event: LogEvent) -> None:
        if event.type is EventType.NODE_STARTED and event.node is not None:
            self._started[event.node] = event.at

    def of(self, event: LogEvent) -> dict[str, Any]:
        """The status message's DataPart for ``event`` (one key: :data:`WORKFLOW_EVENT_KEY`)."""
        facts: dict[str, Any] = {
            "event": event.type.value,
            "node": event.node,
            "at": iso_time(event.at),
            "seq": event.seq,
        }
        started = self._started.get(event.node or "") if event.type in _ENDS_A_RUN else None
        if started is not None:
            facts["started"] = iso_time(started)
        return {WORKFLOW_EVENT_KEY: facts}
