"""Pause points for crash tests: ``ACCORD_TEST_PAUSE="refund.before_issue@O-1004:30,..."``.

At a planned point the orchestrator writes ``accord-test-pause POINT@ORDER`` to stderr and
sleeps the given seconds (default 60), so a test can SIGKILL it exactly there and restart it.
``POINT`` alone pauses every workflow there, ``POINT@ORDER`` only the one for that order.

The points are named for the moment they mark; three are moments of the tool path, where
:func:`install` wraps the orchestrator's one tool seam (``Deps.tool_path``) when the process is
built, so the nodes call nothing for them (the order is the call's ``order_id`` argument):

=======================  ===========================================================
``order.after_lookup``   after ``orders.lookup`` found the order (before the checks go on)
``refund.before_issue``  before ``refunds.issue`` is called (nothing written yet)
``refund.after_issue``   after ``refunds.issue`` answered (the ledger holds the refund,
                         the workflow's log does not know yet)
=======================  ===========================================================

``policy.child_running`` stays a call in the policy node (nodes_checks.py): it marks the moment
policy-check's child task exists and its id is in the node's state, before it answers. That
moment is inside one A2A call, seen by neither the tool path nor a node boundary; a pause
before or after the node would kill before the child exists or after it finished, and the
crash test "while policy-check runs" and the cancel test (which cancels that child) would test
less. Without a plan it returns at once.

Nothing is planned unless the service installs a plan at start, which it does only from the
settings of development mode (``ACCORD_DEV=1``; the settings refuse ``ACCORD_TEST_PAUSE``
otherwise). Without a plan the tool path is not wrapped at all.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from accord.agents.refund.node_deps import Deps, ToolPath
from accord.runtime.workflow import NodeContext

MARKER: Final = "accord-test-pause"

When = Literal["before", "after"]
ON_TOOL_PATH: Final[Mapping[tuple[When, str], str]] = {
    ("after", "orders.lookup"): "order.after_lookup",
    ("before", "refunds.issue"): "refund.before_issue",
    ("after", "refunds.issue"): "refund.after_issue",
}
"""(when, tool) -> the pause point named for it."""

_plan: dict[str, float] = {}  # the plan of the point kept in a node (policy.child_running)


def install(plan: Mapping[str, float], deps: Deps | None = None) -> None:
    """Plan the pauses of this process (``POINT`` or ``POINT@ORDER`` -> seconds), and wrap the
    tool path of ``deps`` with them; an empty plan wraps nothing."""
    _plan.clear()
    _plan.update(plan)
    if plan and deps is not None:
        deps.tool_path = PausingToolPath(deps.tool_path, dict(plan))


async def pause(point: str, order_id: object) -> None:
    """The point kept in a node: pause there if the plan says so."""
    if _plan:
        await _pause(_plan, point, order_id)


@dataclass(frozen=True)
class PausingToolPath:
    """The tool path with the pause points of :data:`ON_TOOL_PATH` around its calls."""

    inner: ToolPath
    plan: Mapping[str, float]

    async def __call__(
        self, ctx: NodeContext, tool: str, arguments: dict[str, Any], **options: Any
    ) -> dict[str, Any]:
        order_id = arguments.get("order_id")
        await self._at("before", tool, order_id)
        answer = await self.inner(ctx, tool, arguments, **options)
        await self._at("after", tool, order_id)
        return answer

    async def _at(self, when: When, tool: str, order_id: object) -> None:
        point = ON_TOOL_PATH.get((when, tool))
        if point is not None:
            await _pause(self.plan, point, order_id)


async def _pause(plan: Mapping[str, float], point: str, order_id: object) -> None:
    seconds = plan.get(f"{point}@{order_id}", plan.get(point))
    if seconds is None:
        return
    print(f"{MARKER} {point}@{order_id}", file=sys.stderr, flush=True)
    await asyncio.sleep(seconds)
