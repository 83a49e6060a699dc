"""The refund workflow graph ("refund", version "3"), and versions "1" and "2" for workflows
in flight.

    intake ──┬─ "refund" ──> checks ──┬──> order  ──┐
             │                        ├──> policy ──┼──> decide ─┬─ "refund"   ──> refund
             │                        └──> risk   ──┘            ├─ "approval" ──> approval
             └─ default  ──> answer                              └─ default    ──> explain

    approval ──┬─ "approve" ──> refund
               └─ default   ──> rejected

Version 3 keys each refund by its request (``refund:<order_id>:<workflow_id>``, so a later
request may refund what is left; refund/money.py); version 2, the same graph, keyed it by the
order alone and keeps doing so for its workflows in flight. Version 2 lets intake end a
conversation that is not a refund request (``answer``). A route
picks one node and cannot fan out, so the refund route goes to ``checks``, which does nothing
but start the three checks from its edges. Version 1 (intake fans out straight to the checks)
stays registered so that a workflow started on it finishes on it (the runtime resumes a
workflow on the version it started on); its intake fails what is not a refund request, as
it did.

Nodes are closures over :class:`Deps`; the graphs are validated when the runtime registers
them.

Retries happen at one level, the client of each hop, and no node retries: a tool call is
retried by the MCP client (the error's retry class, its ``RetryPolicy``: ``max_attempts``
calls within ``deadline_ms``), an agent call by the A2A client (when the request is safe to
send again). A node retry on top would multiply them (it was three node attempts of four client
attempts each: up to 12 calls and ~90 s before a node failed), and the client is the one level
every caller has: policy-check and risk-check call tools without a workflow. A check that fails
after its client's retries fails the workflow with the contract code; a child agent whose own
tools failed has already retried them.
Nodes return the typed models of ``outputs.py`` (logged as JSON).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

from accord.agents.refund import nodes_answer, nodes_checks, nodes_intake, nodes_outcome
from accord.agents.refund.config import (
    GRAPH_NAME,
    GRAPH_VERSION,
    GRAPH_VERSION_1,
    GRAPH_VERSION_2,
)
from accord.agents.refund.node_deps import Deps
from accord.agents.workflow import Graph, NodeContext
from accord.contracts.domain import ApprovalDecision

NODES: Final = (
    "intake",
    "checks",
    "order",
    "policy",
    "risk",
    "decide",
    "approval",
    "refund",
    "explain",
    "rejected",
    "answer",
)
NODES_V1: Final = tuple(n for n in NODES if n not in ("checks", "answer"))
CHECK_TIMEOUT_S: Final = 120.0


async def checks(deps: Deps, ctx: NodeContext) -> None:
    """The fan-out point of the three checks (a route cannot fan out itself)."""
    return None


def build_graph(deps: Deps, version: str = GRAPH_VERSION) -> Graph:
    """The current version (3); version 2 is the same graph with refunds keyed by order."""
    graph = Graph(GRAPH_NAME, version=version)
    graph.node("intake", _bound(deps, nodes_intake.intake))
    graph.node("checks", _bound(deps, checks))
    _add_checks_and_ends(graph, deps, key_per_order=version == GRAPH_VERSION_2)
    graph.node("answer", _bound(deps, nodes_answer.answer))
    graph.route(
        "intake",
        {nodes_intake.REFUND_LABEL: "checks", nodes_intake.ANSWER_LABEL: "answer"},
        default="answer",
    )
    graph.edge("checks", "order", "policy", "risk")
    return graph


def build_graph_v1(deps: Deps) -> Graph:
    """Version 1, kept for workflows that started on it."""
    graph = Graph(GRAPH_NAME, version=GRAPH_VERSION_1)
    graph.node("intake", _bound(deps, nodes_intake.intake_v1))
    _add_checks_and_ends(graph, deps, key_per_order=True)
    graph.edge("intake", "order", "policy", "risk")
    return graph


def build_graphs(deps: Deps) -> list[Graph]:
    """Every version a runtime registers, oldest first (the last is the one new work uses)."""
    return [build_graph_v1(deps), build_graph(deps, GRAPH_VERSION_2), build_graph(deps)]


def _bound(deps: Deps, fn: Callable[[Deps, NodeContext], Awaitable[Any]]) -> Any:
    return partial(fn, deps)


def _add_checks_and_ends(graph: Graph, deps: Deps, *, key_per_order: bool) -> None:
    cancel = _bound(deps, nodes_checks.cancel_child)
    graph.node("order", _bound(deps, nodes_checks.order), timeout_s=CHECK_TIMEOUT_S)
    graph.node(
        "policy", _bound(deps, nodes_checks.policy), timeout_s=CHECK_TIMEOUT_S, on_cancel=cancel
    )
    graph.node("risk", _bound(deps, nodes_checks.risk), timeout_s=CHECK_TIMEOUT_S, on_cancel=cancel)
    graph.node("decide", _bound(deps, nodes_outcome.decide))
    graph.node("approval", _bound(deps, nodes_outcome.approval))
    refund = partial(nodes_outcome.refund, deps, key_per_order=key_per_order)
    graph.node("refund", refund)
    graph.node("explain", _bound(deps, nodes_outcome.explain))
    graph.node("rejected", _bound(deps, nodes_outcome.rejected))
    graph.join(["order", "policy", "risk"], "decide")
    graph.route("decide", {"refund": "refund", "approval": "approval"}, default="explain")
    graph.route(
        "approval",
        {ApprovalDecision.APPROVE: "refund", ApprovalDecision.REJECT: "rejected"},
        default="rejected",
    )
