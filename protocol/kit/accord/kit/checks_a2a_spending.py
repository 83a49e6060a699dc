"""Kit check of the spending report (ENV-010): a task that did work under the kit's envelope
says in its metadata what it spent of it (``dev.accord/spent`` units,
``dev.accord/toolCallsSpent`` tool calls), as non-negative integers within the envelope's
budget.

The caller counts that report against the request's one budget and treats a task that worked
and reports nothing, or a figure outside its grant, as a CONTRACT_VIOLATION of the child
(accord.protocol.a2a.spent_report): an agent that leaves it out passes every other check and
still fails every request a mesh delegates to it. Registered on :data:`A2A_CHECKS` after
checks_a2a.py's (run_checks imports this module); it reads the probe conversation's task.
"""

from __future__ import annotations

from typing import Any

from accord.contracts.keys import SPENT_META_KEY, TOOL_CALLS_SPENT_META_KEY
from accord.contracts.status import A2AState
from accord.kit.a2a_context import A2AContext, last_state
from accord.kit.a2a_wire import task_of
from accord.kit.checks_a2a import A2A_CHECKS
from accord.kit.model import Skipped, Violation

check = A2A_CHECKS
# The states of a task that did work: it ran a turn, so its budget admitted one.
WORKED = (A2AState.COMPLETED, A2AState.INPUT_REQUIRED)


def _figure(raw: Any) -> int | None:
    """A JSON number that is a non-negative integer (3.0 is 3: protobuf Structs hold doubles)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    if isinstance(raw, float) and not raw.is_integer():
        return None
    return int(raw) if raw >= 0 else None


@check("ENV-010", "a task that worked reports what it spent, within its envelope's budget")
async def reports_spending(ctx: A2AContext) -> None:
    run = await ctx.probe_run()
    state = last_state(run.last)
    if state not in WORKED:
        raise Skipped(f"the probe's task ended {state}: it did no work to report")
    got = await ctx.get_task(run.task_id)
    metadata = (task_of(got.result) or {}).get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    budget = ctx.envelope(run.probe.acts_for)["budget"]
    for key, granted in (
        (SPENT_META_KEY, budget["units"]),
        (TOOL_CALLS_SPENT_META_KEY, budget["tool_calls"]),
    ):
        value = _figure(metadata.get(key))
        if value is None or value > granted:
            raise Violation(
                f"the task's metadata.{key} is {metadata.get(key)!r}",
                sent=got.sent,
                received=got.shown(),
                expected=f"a non-negative integer no larger than the envelope's {granted}",
            )
