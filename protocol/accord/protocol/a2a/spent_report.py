"""What a child task reports it spent, checked by its caller before it counts (ENV-010).

An Accord agent reports in its task's metadata what the task spent of the envelope it was
given (``dev.accord/spent`` units, ``dev.accord/toolCallsSpent`` tool calls, over all its
turns: :mod:`accord.protocol.a2a.budget_guard`). The caller counts that against the request's
one budget, so the report is a peer's claim about the caller's money: a negative number would
give budget back, a huge one would starve the siblings. :func:`checked_spent` accepts a
report only if each figure is a non-negative integer, no smaller than what the task reported
before (spending is never undone) and no larger than the child's grant; anything else is a
CONTRACT_VIOLATION of that child, which the caller counts as its whole grant spent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import SPENT_META_KEY, TOOL_CALLS_SPENT_META_KEY

Spent = tuple[int, int]
"""(units, tool calls)."""

NOTHING: Final[Spent] = (0, 0)


def checked_spent(
    metadata: Mapping[str, Any],
    *,
    grant: Spent,
    agent: str,
    before: Spent = NOTHING,
    worked: bool = True,
) -> Spent:
    """The (units, tool calls) a child task reports in ``metadata``, checked against the
    ``grant`` of its envelope and what it reported ``before``. A report that is absent counts
    as nothing only for a task that did no work (``worked`` False: refused or failed before
    its budget admitted a turn); a task that worked must say what it spent."""
    return (
        _figure(metadata, SPENT_META_KEY, grant[0], before[0], agent, worked),
        _figure(metadata, TOOL_CALLS_SPENT_META_KEY, grant[1], before[1], agent, worked),
    )


def _figure(
    metadata: Mapping[str, Any], key: str, granted: int, before: int, agent: str, worked: bool
) -> int:
    raw = metadata.get(key)
    if raw is None and not worked:
        return before
    problem = None
    value = _integer(raw)
    if value is None:
        problem = "is not a non-negative integer"
    elif value < before:
        problem = f"is less than the {before} it reported before (spending is never undone)"
    elif value > granted:
        problem = f"is more than its grant of {granted}"
    if problem is None and value is not None:
        return value
    raise AccordError(
        ErrorCode.CONTRACT_VIOLATION,
        f"{agent} reported what it spent ({key}) that {problem}: counted as its whole grant",
        {"agent": agent, "field": f"metadata.{key}", "grant": granted, "requirement": "ENV-010"},
    )


def _integer(raw: Any) -> int | None:
    """A JSON number that is a non-negative integer (protobuf's Struct turns every number into
    a double: 3.0 is 3), else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw >= 0 else None
    if isinstance(raw, float) and math.isfinite(raw) and raw.is_integer() and raw >= 0:
        return int(raw)
    return None
