"""The refund workflow's pure parts: the graph's shape, intake's order-id rules, the routing of
decide, what an answer carries, and the node outputs' JSON. End-to-end behaviour is in
tests/mesh/ and tests/agents/runner/."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from accord.agents.models import Intake, Intent, Language, Missing, build_router
from accord.agents.refund import nodes_outcome
from accord.agents.refund.config import RefundSettings
from accord.agents.refund.facts import (
    WorkflowInput,
    answer_text,
    answer_value,
    asked_payload,
    order_refund_key,
)
from accord.agents.refund.graph import NODES, NODES_V1, build_graph, build_graphs
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.nodes_intake import checked_order, with_given_order
from accord.agents.refund.outputs import (
    ApproverAnswer,
    OrderFound,
    OrderNotFound,
    PolicyVerdict,
    RefundResult,
    Summary,
    Upstream,
    from_peer,
)
from accord.agents.refund.peers import Peers
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.mcp.client import ToolClient
from accord.refund_contracts.domain import RefundReason
from accord.runtime.workflow import NodeContext, Route

# Every node's output as the 0.1 nodes wrote it to the log (captured from real runs of the
# in-process Runner on 0.1, with the approval and rejected outputs written in their shape).
OUTPUTS_0_1: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "outputs_0_1.json").read_text()
)
# Fields added since 0.1 (graph 2, issue 13), each with a default: a 0.1 output reads without
# them and writes them at their default, and nothing else changes.
ADDED_SINCE_0_1: dict[str, dict[str, Any]] = {
    "intake": {"amount": None},
    "policy": {"params": {}},
    "decide": {"params": {}},
    "order": {"refunds": []},
}


def _as_0_1(node: str, dumped: dict[str, Any]) -> dict[str, Any]:
    added = ADDED_SINCE_0_1.get(node, {})
    assert {k: dumped[k] for k in added if k in dumped} == {
        k: v for k, v in added.items() if k in dumped
    }, node
    return {k: v for k, v in dumped.items() if k not in added}


def _deps() -> Deps:
    return Deps(
        tools=ToolClient.for_servers([]),
        peers=Peers({}),
        router=build_router(),
        settings=RefundSettings(),
    )


def _input(**fields: Any) -> dict[str, Any]:
    """A workflow input as the executor writes it (C-01's request, no envelope constraint)."""
    return WorkflowInput(
        customer_id="C-01",
        owner="accord/C-01",
        app="accord",
        session="s-1",
        units=100,
        deadline="2030-01-01T00:00:00+00:00",
        **fields,
    ).model_dump(mode="json")


def _ctx(outputs: dict[str, Any], inp: dict[str, Any] | None = None) -> NodeContext:
    return NodeContext("wf-1", "decide", inp or _input(), {}, outputs, 1)


def test_the_graph_is_valid_and_shaped_as_documented() -> None:
    graph = build_graph(_deps()).validate()
    assert tuple(graph.nodes) == NODES
    assert graph.edge_predecessors("decide") == frozenset({"order", "policy", "risk"})
    assert graph.successors("intake", "refund") == ([], "checks")
    assert graph.successors("intake", "answer") == ([], "answer")
    assert graph.successors("intake", None) == ([], "answer")
    assert graph.successors("checks", None)[0] == ["order", "policy", "risk"]
    assert graph.successors("decide", "approval")[1] == "approval"
    assert graph.successors("decide", "anything else")[1] == "explain"
    assert graph.successors("approval", "approve")[1] == "refund"
    assert graph.successors("approval", "reject")[1] == "rejected"
    assert {n for n in graph.nodes if graph.is_sink(n)} == {
        "refund",
        "explain",
        "rejected",
        "answer",
    }


def test_graph_1_stays_registered_for_workflows_in_flight() -> None:
    old, keyed_by_order, new = build_graphs(_deps())
    old.validate()
    keyed_by_order.validate()
    assert (old.version, keyed_by_order.version, new.version) == ("1", "2", "3")
    assert tuple(old.nodes) == NODES_V1
    assert old.successors("intake", None)[0] == ["order", "policy", "risk"]


async def _route(**changes: dict[str, Any]) -> Route:
    base = OUTPUTS_0_1["refunded O-1001"]
    outputs = {n: {**base[n], **changes.get(n, {})} for n in ("intake", "order", "policy", "risk")}
    return await nodes_outcome.decide(_deps(), _ctx(outputs))


async def test_decide_routes_by_eligibility_and_risk() -> None:
    low = await _route()
    assert low.label == "refund"
    assert isinstance(low.output, Summary)
    assert (low.output.amount_cents, low.output.currency) == (5999, "USD")
    high = await _route(risk={"risk": "high", "score": 0.55, "signals": ["large_amount"]})
    assert high.label == "approval"
    assert high.output.signals == ["large_amount"]
    denied = await _route(policy={"eligible": False, "rule": "final_sale", "max_refund_cents": 0})
    assert denied.label == "explain"
    assert denied.output.rule == "final_sale"
    missing = await nodes_outcome.decide(_deps(), _ctx(OUTPUTS_0_1["not found O-9999"]))
    assert missing.label == "explain"
    assert missing.output.rule == "order_not_found"
    assert (
        _as_0_1("decide", missing.output.model_dump(mode="json"))
        == (OUTPUTS_0_1["not found O-9999"]["decide"])
    )


async def test_decide_pays_nothing_above_the_envelopes_limit() -> None:
    """max_refund_cents (contract 1.3, ENV-007): above it, explain (not capped, no approver)."""
    outputs = OUTPUTS_0_1["refunded O-1001"]
    over = await nodes_outcome.decide(_deps(), _ctx(outputs, _input(max_refund_cents=5998)))
    assert over.label == "explain"
    assert isinstance(over.output, Summary)
    assert (over.output.rule, over.output.amount_cents) == ("amount_exceeds_limit", 0)
    assert over.output.params["limit_cents"] == 5998
    assert over.output.params["requested_cents"] == 5999
    within = await nodes_outcome.decide(_deps(), _ctx(outputs, _input(max_refund_cents=5999)))
    assert within.label == "refund"


@pytest.mark.parametrize("run", sorted(OUTPUTS_0_1))
def test_outputs_logged_by_0_1_read_back_and_dump_to_the_same_json(run: str) -> None:
    """A log written by 0.1 replays: every node's output reads into its model, and the model
    writes the same JSON again (so new logs have the 0.1 shape too)."""
    outputs = OUTPUTS_0_1[run]
    upstream = Upstream(outputs)
    readers: dict[str, Callable[[], BaseModel | None]] = {
        "intake": upstream.intake,
        "order": upstream.order,
        "policy": upstream.policy,
        "risk": upstream.risk,
        "decide": upstream.decide,
        "approval": upstream.approval,
    }
    for node, output in outputs.items():
        # An end node's output is the orchestrator skill's output.
        read = readers.get(node, lambda: RefundResult.model_validate(output))  # noqa: B023
        model = read()
        assert model is not None
        assert _as_0_1(node, model.model_dump(mode="json")) == output, node
    order = upstream.order()
    assert isinstance(order, OrderFound if outputs["order"]["found"] else OrderNotFound)
    if "approval" in outputs:
        assert isinstance(upstream.approval(), ApproverAnswer)


async def test_decide_writes_what_0_1_wrote() -> None:
    for run in ("refunded O-1001", "final sale O-1003", "rejected O-1004"):
        outputs = OUTPUTS_0_1[run]
        routed = await nodes_outcome.decide(_deps(), _ctx(outputs))
        assert isinstance(routed.output, Summary)
        dumped = routed.output.model_dump(mode="json")
        params = dumped.pop("params")
        assert dumped == outputs["decide"], run
        # a 1.0 policy-check sent no params: the rule's sentence takes them from the order
        assert params["order_id"] == outputs["order"]["order_id"], run


def test_a_peer_answering_outside_its_contract_is_a_contract_violation() -> None:
    answer = {k: v for k, v in OUTPUTS_0_1["refunded O-1001"]["policy"].items() if k != "rule"}
    with pytest.raises(AccordError) as caught:
        from_peer(PolicyVerdict, answer, "policy-check")
    assert caught.value.code is ErrorCode.CONTRACT_VIOLATION
    assert caught.value.details == {"peer": "policy-check", "field": "rule", "rule": "missing"}


def test_a_structured_order_id_wins_and_a_malformed_one_is_asked_again() -> None:
    asked = Intake(intent=Intent.OTHER, language=Language.EN)
    given = with_given_order(asked, "O-1002")
    assert given.intent is Intent.REFUND
    assert given.order_id == "O-1002"
    assert given.missing == [Missing.REASON]
    short = checked_order(
        Intake(
            intent=Intent.REFUND, order_id="O-12", reason=RefundReason.DAMAGED, language=Language.ZH
        )
    )
    assert short.order_id is None
    assert short.missing == [Missing.ORDER_ID]
    assert short.question is not None
    assert "订单号" in short.question


def test_an_answer_carries_the_question_it_answers() -> None:
    asked = {"question": "photo?", "child_task_id": "t-9"}
    value = answer_value("", {"evidence": "IMG_1.jpg"}, asked)
    assert answer_text(value) == "IMG_1.jpg"
    assert asked_payload(value)["child_task_id"] == "t-9"
    assert answer_text(answer_value("O-1001", None, None)) == "O-1001"
    assert order_refund_key("O-1001") == "refund:O-1001"
