"""The crash tests' pause points sit on the orchestrator's tool seam (``Deps.tool_path``), put
there when the process is built and only with a plan: without one the nodes' tool calls run
the plain path, and no node calls a pause for them (accord.agents.refund.pause_points)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from accord.agents.models import build_router
from accord.agents.refund import pause_points
from accord.agents.refund.budget import TOOL_CALLS
from accord.agents.refund.config import RefundSettings
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.peers import Peers
from accord.protocol.mcp.client import ToolClient
from accord.runtime.workflow import NodeContext


class Tools(ToolClient):
    """Answers every call from memory; the marker lines it saw printed before each call."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        super().__init__([])
        self._capsys = capsys
        self.seen: list[tuple[str, list[str]]] = []

    async def call(
        self, tool_name: str, arguments: Mapping[str, Any], **options: Any
    ) -> dict[str, Any]:
        self.seen.append((tool_name, self._capsys.readouterr().err.splitlines()))
        return {"found": True}


def _deps(tools: ToolClient) -> Deps:
    return Deps(tools=tools, peers=Peers({}), router=build_router(), settings=RefundSettings())


def _ctx() -> NodeContext:
    inp = WorkflowInput(
        text="refund O-1005",
        customer_id="C-01",
        owner="accord/C-01",
        app="accord",
        session="s-1",
        units=100,
        tool_calls=10,
        deadline="2030-01-01T00:00:00+00:00",
    ).model_dump(mode="json")
    return NodeContext("wf-1", "refund", inp, {}, {}, 1)


def test_without_a_plan_the_tool_path_is_the_plain_one(capsys: pytest.CaptureFixture[str]) -> None:
    deps = _deps(Tools(capsys))
    try:
        pause_points.install({}, deps)  # what a production orchestrator does (no ACCORD_DEV)
        assert deps.tool_path == deps.paid_call
    finally:
        pause_points.install({})


async def test_each_tool_path_point_pauses_at_its_moment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tools = Tools(capsys)
    deps = _deps(tools)
    plan = {f"{point}@O-1005": 0.0 for point in pause_points.ON_TOOL_PATH.values()}
    try:
        pause_points.install(plan, deps)
        ctx = _ctx()
        for tool in ("orders.lookup", "refunds.issue", "refunds.get"):
            await deps.call_tool(ctx, tool, {"order_id": "O-1005"})
        await deps.call_tool(ctx, "refunds.issue", {"order_id": "O-1003"})  # another order
        after = capsys.readouterr().err.splitlines()
    finally:
        pause_points.install({})
    marker = pause_points.MARKER
    assert tools.seen == [
        ("orders.lookup", []),
        (
            "refunds.issue",
            [f"{marker} order.after_lookup@O-1005", f"{marker} refund.before_issue@O-1005"],
        ),
        ("refunds.get", [f"{marker} refund.after_issue@O-1005"]),
        ("refunds.issue", []),
    ]
    assert after == []
    assert ctx.tally.total(TOOL_CALLS) == 4  # paid as without the pauses
