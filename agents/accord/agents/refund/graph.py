"""The refund workflow graph ("refund", version "1").

    intake ──┬──> order  ──┐
             ├──> policy ──┼──> decide ──┬─ "refund"   ──> refund
             └──> risk   ──┘             ├─ "approval" ──> approval ──┬─ "approve" ──> refund
                                         │                            └─ default   ──> rejected
                                         └─ default    ──> explain

Nodes are closures over :class:`Deps` and return the typed models of ``outputs.py`` (logged as
JSON); the graph is validated when the runtime registers it.
Retries: the checks and the refund retry transient failures (class ``retry``); intake,
decide, approval and the explanations do not (their failures are not transient).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

from accord.agents.refund import nodes_checks, nodes_intake, nodes_outcome
from accord.agents.refund.config import GRAPH_NAME, GRAPH_VERSION
from accord.agents.refund.deps import Deps
from accord.agents.workflow import Graph, NodeContext
from accord.contracts.domain import ApprovalDecision
from accord.contracts.retry import RetryPolicy

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
TRANSIENT: Final = RetryPolicy(max_attempts=3, base_delay_ms=200, max_delay_ms=2000)
CHECK_TIMEOUT_S: Final = 120.0


def build_graph(deps: Deps) -> Graph:
    def bound(fn: Callable[[Deps, NodeContext], Awaitable[Any]]) -> Any:
        return partial(fn, deps)

    cancel = bound(nodes_checks.cancel_child)
    graph = Graph(GRAPH_NAME, version=GRAPH_VERSION)
    graph.node("intake", bound(nodes_intake.intake))
    graph.node("order", bound(nodes_checks.order), retry=TRANSIENT, timeout_s=CHECK_TIMEOUT_S)
    graph.node(
        "policy",
        bound(nodes_checks.policy),
        retry=TRANSIENT,
        timeout_s=CHECK_TIMEOUT_S,
        on_cancel=cancel,
    )
    graph.node(
        "risk",
        bound(nodes_checks.risk),
        retry=TRANSIENT,
        timeout_s=CHECK_TIMEOUT_S,
        on_cancel=cancel,
    )
    graph.node("decide", bound(nodes_outcome.decide))
    graph.node("approval", bound(nodes_outcome.approval))
    graph.node("refund", bound(nodes_outcome.refund), retry=TRANSIENT)
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
