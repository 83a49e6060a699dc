"""The already-refunded answer reads the ledger (refunds.list) through ``Deps.call_tool``: paid
from the request's tool calls, and not made when none is left (the rule's sentence instead)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accord.agents.models import build_router
from accord.agents.refund import nodes_outcome
from accord.agents.refund.budget import TOOL_CALLS
from accord.agents.refund.config import RefundSettings
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.outputs import RefundResult
from accord.agents.refund.peers import Peers
from accord.protocol.mcp.client import ToolClient
from accord.runtime.workflow import NodeContext

OUTPUTS = json.loads((Path(__file__).parent / "outputs_0_1.json").read_text())["refunded O-1001"]
RECEIPT = {
    "receipt_id": "R-1",
    "idempotency_key": "refund:O-1001:wf-0",
    "order_id": "O-1001",
    "customer_id": "C-01",
    "amount_cents": 5999,
    "currency": "USD",
    "reason": "wrong_size",
    "approved_by": None,
    "created_at": "2026-11-01T10:00:00+00:00",
}


class Ledger(ToolClient):
    """A tool client that answers refunds.list from memory and remembers every call made."""

    def __init__(self) -> None:
        super().__init__([])
        self.made: list[str] = []

    async def call(
        self, tool_name: str, arguments: Mapping[str, Any], **options: Any
    ) -> dict[str, Any]:
        self.made.append(tool_name)
        return {"refunds": [RECEIPT], "total_cents": 5999}


def _explain(tool_calls: int) -> tuple[Deps, Ledger, NodeContext]:
    tools = Ledger()
    deps = Deps(tools=tools, peers=Peers({}), router=build_router(), settings=RefundSettings())
    inp = WorkflowInput(
        text="refund O-1001 again",
        customer_id="C-01",
        owner="accord/C-01",
        app="accord",
        session="s-1",
        units=100,
        tool_calls=tool_calls,
        deadline="2030-01-01T00:00:00+00:00",
    ).model_dump(mode="json")
    decided = {**OUTPUTS["decide"], "rule": "already_refunded", "amount_cents": 0}
    outputs = {"intake": OUTPUTS["intake"], "decide": decided}
    return deps, tools, NodeContext("wf-1", "explain", inp, {}, outputs, 1)


async def test_the_ledger_read_is_paid_for() -> None:
    deps, ledger, ctx = _explain(tool_calls=5)
    result = await nodes_outcome.explain(deps, ctx)
    assert isinstance(result, RefundResult)
    assert result.decision == "already_refunded"
    assert result.receipt is not None
    assert result.receipt.receipt_id == "R-1"
    assert ledger.made == ["refunds.list"]
    assert ctx.tally.total(TOOL_CALLS) == 1


async def test_no_tool_call_left_means_no_ledger_read_and_the_rules_sentence() -> None:
    deps, ledger, ctx = _explain(tool_calls=0)
    result = await nodes_outcome.explain(deps, ctx)
    assert ledger.made == []  # nothing called past the budget
    assert ctx.tally.total(TOOL_CALLS) == 0
    assert result.decision == "not_eligible"
    assert result.receipt is None
    assert result.rule == "already_refunded"
