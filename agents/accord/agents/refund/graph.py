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

Retries happen at two levels. The client of each hop retries a short blip (the MCP client by
the error's retry class and its ``RetryPolicy``, an agent call by the A2A client when the
request is safe to send again): a second or two. The nodes that reach another service
(``order``, ``policy``, ``risk``, ``refund``) then retry a retryable error (UNAVAILABLE,
RETRYABLE_TIMEOUT, RATE_LIMITED) with backoff until the customer's deadline (the envelope's,
``WorkflowInput.deadline``), with no attempt count: a dependency that restarts, or is down for
a minute, delays the refund instead of failing it. Each wait is in the log (the node_failed
event's ``retry_at``), so an orchestrator restart keeps the schedule and the attempt count.
Non-retryable errors stop at once. ``refund`` is safe to run again: its write carries the
business idempotency key. ``decide`` and the ends reach nothing and never retry.
Nodes return the typed models of ``outputs.py`` (logged as JSON).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
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
from accord.contracts.retry import UNTIL_DEADLINE
from accord.refund_contracts import compat
from accord.refund_contracts.domain import ApprovalDecision
from accord.runtime.workflow import Graph, NodeContext

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
    graph = Graph(GRAPH_NAME, version=version, deadline_of=deadline_of)
    graph.node("intake", _bound(deps, nodes_intake.intake))
    graph.node("checks", _bound(deps, checks))
    _add_checks_and_ends(graph, deps, key_per_order=version == GRAPH_VERSION_2)
    graph.node("answer", _bound(deps, nodes_answer.answer), retry=UNTIL_DEADLINE)  # a read
    graph.route(
        "intake",
        {nodes_intake.REFUND_LABEL: "checks", nodes_intake.ANSWER_LABEL: "answer"},
        default="answer",
    )
    graph.edge("checks", "order", "policy", "risk")
    return graph


@compat.kept_for(compat.REFUND_GRAPH_V1_V2)
def build_graph_v1(deps: Deps) -> Graph:
    """Version 1, kept for workflows that started on it."""
    graph = Graph(GRAPH_NAME, version=GRAPH_VERSION_1, deadline_of=deadline_of)
    graph.node("intake", _bound(deps, nodes_intake.intake_v1))
    _add_checks_and_ends(graph, deps, key_per_order=True)
    graph.edge("intake", "order", "policy", "risk")
    return graph


def build_graphs(deps: Deps) -> list[Graph]:
    """Every version a runtime registers, oldest first (the last is the one new work uses)."""
    return [build_graph_v1(deps), build_graph(deps, GRAPH_VERSION_2), build_graph(deps)]


def deadline_of(raw: Any) -> float | None:
    """The customer's deadline (epoch seconds) from the workflow input; None if unreadable."""
    deadline = raw.get("deadline") if isinstance(raw, dict) else None
    if not isinstance(deadline, str):
        return None
    try:
        return datetime.fromisoformat(deadline).timestamp()
    except ValueError:
        return None


def _bound(deps: Deps, fn: Callable[[Deps, NodeContext], Awaitable[Any]]) -> Any:
    return partial(fn, deps)


def _add_checks_and_ends(graph: Graph, deps: Deps, *, key_per_order: bool) -> None:
    cancel = _bound(deps, nodes_checks.cancel_child)
    retry = UNTIL_DEADLINE
    graph.node("order", _bound(deps, nodes_checks.order), retry=retry, timeout_s=CHECK_TIMEOUT_S)
    graph.node(
        "policy",
        _bound(deps, nodes_checks.policy),
        retry=retry,
        timeout_s=CHECK_TIMEOUT_S,
        on_cancel=cancel,
    )
    graph.node(
        "risk",
        _bound(deps, nodes_checks.risk),
        retry=retry,
        timeout_s=CHECK_TIMEOUT_S,
        on_cancel=cancel,
    )
    graph.node("decide", _bound(deps, nodes_outcome.decide))
    graph.node("approval", _bound(deps, nodes_outcome.approval))
    refund = partial(nodes_outcome.refund, deps, key_per_order=key_per_order)
    graph.node("refund", refund, retry=retry)
    # explain reads the ledger (refunds.list) for an order already refunded: a read, safe to
    # run again, so it rides out a restarting payments server like the checks do.
    graph.node("explain", _bound(deps, nodes_outcome.explain), retry=retry)
    graph.node("rejected", _bound(deps, nodes_outcome.rejected))
    graph.join(["order", "policy", "risk"], "decide")
    graph.route("decide", {"refund": "refund", "approval": "approval"}, default="explain")
    graph.route(
        "approval",
        {ApprovalDecision.APPROVE: "refund", ApprovalDecision.REJECT: "rejected"},
        default="rejected",
    )
