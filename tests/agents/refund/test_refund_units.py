"""The refund workflow's pure parts: the graph's shape, intake's order-id rules, the routing of
decide, and what an answer carries. End-to-end behaviour is in tests/mesh/."""

from __future__ import annotations

from typing import Any

from accord.agents.models import Intake, Intent, Language, Missing, Reason, build_router
from accord.agents.refund import nodes_outcome
from accord.agents.refund.config import RefundSettings
from accord.agents.refund.facts import answer_text, answer_value, asked_payload, refund_key
from accord.agents.refund.graph import NODES, build_graph
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.nodes_intake import _checked, _with_order
from accord.agents.refund.peers import Peers
from accord.agents.workflow import NodeContext, Route
from accord.protocol.mcp.client import ToolClient


def _deps() -> Deps:
    return Deps(
        tools=ToolClient.for_servers([]),
        peers=Peers({}),
        router=build_router(),
        settings=RefundSettings(),
    )


def _ctx(outputs: dict[str, Any]) -> NodeContext:
    return NodeContext("wf-1", "decide", {}, {}, outputs, 1)


def test_the_graph_is_valid_and_shaped_as_documented() -> None:
    graph = build_graph(_deps()).validate()
    assert tuple(graph.nodes) == NODES
    assert graph.edge_predecessors("decide") == frozenset({"order", "policy", "risk"})
    assert graph.successors("intake", None)[0] == ["order", "policy", "risk"]
    assert graph.successors("decide", "approval")[1] == "approval"
    assert graph.successors("decide", "anything else")[1] == "explain"
    assert graph.successors("approval", "approve")[1] == "refund"
    assert graph.successors("approval", "reject")[1] == "rejected"
    assert {n for n in graph.nodes if graph.is_sink(n)} == {"refund", "explain", "rejected"}


async def _route(**outputs: dict[str, Any]) -> Route:
    base = {
        "intake": {"order_id": "O-1001"},
        "order": {"found": True, "currency": "USD"},
        "policy": {
            "found": True,
            "eligible": True,
            "rule": "within_window",
            "max_refund_cents": 5999,
        },
        "risk": {"found": True, "risk": "low", "score": 0.05, "signals": []},
    }
    return await nodes_outcome.decide(_deps(), _ctx({**base, **outputs}))


async def test_decide_routes_by_eligibility_and_risk() -> None:
    assert (await _route()).label == "refund"
    high = await _route(risk={"found": True, "risk": "high", "signals": ["large_amount"]})
    assert high.label == "approval"
    assert high.output["signals"] == ["large_amount"]
    denied = await _route(
        policy={"found": True, "eligible": False, "rule": "final_sale", "max_refund_cents": 0}
    )
    assert denied.label == "explain"
    assert denied.output["rule"] == "final_sale"
    missing = await _route(order={"found": False})
    assert missing.label == "explain"
    assert missing.output["rule"] == "order_not_found"


def test_a_structured_order_id_wins_and_a_malformed_one_is_asked_again() -> None:
    asked = Intake(intent=Intent.OTHER, language=Language.EN)
    given = _with_order(asked, "O-1002")
    assert given.intent is Intent.REFUND
    assert given.order_id == "O-1002"
    assert given.missing == [Missing.REASON]
    short = _checked(
        Intake(intent=Intent.REFUND, order_id="O-12", reason=Reason.DAMAGED, language=Language.ZH)
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
    assert refund_key("O-1001") == "refund:O-1001"
