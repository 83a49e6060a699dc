"""The refund workflow graph ("refund", version "1").

    intake ──┬──> order  ──┐
             ├──> policy ──┼──> decide ──┬─ "refund"   ──> refund
             └──> risk   ──┘             ├─ "approval" ──> approval ──┬─ "approve" ──> refund
                                         │                            └─ default   ──> rejected
                                         └─ default    ──> explain

Nodes are closures over :class:`Deps`; the graph is validated when the runtime registers it.

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

from accord.agents.refund import nodes_checks, nodes_intake, nodes_outcome
from accord.agents.refund.config import GRAPH_NAME, GRAPH_VERSION
from accord.agents.refund.node_deps import Deps
from accord.agents.workflow import Graph, NodeContext
from accord.contracts.domain import ApprovalDecision

NODES: Final = (
    "intake",
    "order",
    "policy",
    "risk",
    "decide",
    "approval",
    "refund",
    "explain",
    "rejected",
)
CHECK_TIMEOUT_S: Final = 120.0


def build_graph(deps: Deps) -> Graph:
    def bound(fn: Callable[[Deps, NodeContext], Awaitable[Any]]) -> Any:
        return partial(fn, deps)

    cancel = bound(nodes_checks.cancel_child)
    graph = Graph(GRAPH_NAME, version=GRAPH_VERSION)
    graph.node("intake", bound(nodes_intake.intake))
    graph.node("order", bound(nodes_checks.order), timeout_s=CHECK_TIMEOUT_S)
    graph.node("policy", bound(nodes_checks.policy), timeout_s=CHECK_TIMEOUT_S, on_cancel=cancel)
    graph.node("risk", bound(nodes_checks.risk), timeout_s=CHECK_TIMEOUT_S, on_cancel=cancel)
    graph.node("decide", bound(nodes_outcome.decide))
    graph.node("approval", bound(nodes_outcome.approval))
    graph.node("refund", bound(nodes_outcome.refund))
    graph.node("explain", bound(nodes_outcome.explain))
    graph.node("rejected", bound(nodes_outcome.rejected))
    graph.edge("intake", "order", "policy", "risk")
    graph.join(["order", "policy", "risk"], "decide")
    graph.route("decide", {"refund": "refund", "approval": "approval"}, default="explain")
    graph.route(
        "approval",
        {ApprovalDecision.APPROVE: "refund", ApprovalDecision.REJECT: "rejected"},
        default="rejected",
    )
    return graph
