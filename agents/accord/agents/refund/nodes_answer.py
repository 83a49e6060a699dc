"""answer: the end of a conversation that is not a refund request (graph 2).

"I don't want a refund, just checking O-1004" and "我不是要退款，只是想问一下订单 O-1002 的物流"
are answered from orders.lookup (one read: the order's status and dates, in the customer's
language); an order that is not theirs reads "we could not find order ... on your account";
a question with no order ("What's the weather?") gets what this assistant can do. A
conversation intake gave up on (the same question three times) gets its explanation. Each
ends the task completed, with decision ``no_refund_requested`` or ``not_understood``.
"""

from __future__ import annotations

from typing import Final

from accord.agents.models import DecisionFacts, Language, Outcome
from accord.agents.models.messages import say
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.outputs import Inquiry, RefundResult, Upstream, from_peer
from accord.contracts.errors import AccordError, ErrorCode
from accord.refund_contracts.domain import RefundDecision
from accord.refund_contracts.orders import OrderFacts
from accord.runtime.workflow import NodeContext

ORDER_TOOL: Final = "orders.lookup"
STATUS_MESSAGES: Final = frozenset({"delivered", "shipped", "processing", "canceled"})


async def answer(deps: Deps, ctx: NodeContext) -> RefundResult:
    inp = WorkflowInput.model_validate(ctx.input)
    said = Upstream(ctx.outputs).inquiry()
    model = deps.model(inp, ctx)
    if said.kind == "not_understood":
        facts = DecisionFacts(
            outcome=Outcome.NOT_UNDERSTOOD,
            language=said.language,
            order_id=said.order_id,
            missing=[said.expecting or "help"],
            params={"asked": said.asked},
        )
        explanation = await model.explain(facts)
        return _result(RefundDecision.NOT_UNDERSTOOD, said, explanation)
    facts = DecisionFacts(
        outcome=Outcome.NO_REFUND,
        language=said.language,
        order_id=said.order_id,
        params={"kind": said.kind},
    )
    if said.order_id is not None:
        order = await _lookup(deps, ctx, inp, said.order_id)
        if order is None:
            facts = facts.model_copy(update={"outcome": Outcome.NOT_FOUND})
        else:
            facts = facts.model_copy(update={"detail": status_sentence(order, said.language)})
    explanation = await model.explain(facts)
    return _result(RefundDecision.NO_REFUND_REQUESTED, said, explanation)


def status_sentence(order: OrderFacts, language: Language) -> str:
    """Where the order is, from orders.lookup's facts."""
    code = f"status.{order.status}" if order.status in STATUS_MESSAGES else "status.other"
    return say(
        code,
        language,
        order_id=order.order_id,
        status=order.status,
        days=order.days_since_delivery,
        delivered_on=(order.delivered_at or "")[:10] or None,
        ordered_on=order.ordered_at[:10],
    )


async def _lookup(
    deps: Deps, ctx: NodeContext, inp: WorkflowInput, order_id: str
) -> OrderFacts | None:
    try:
        found = await deps.call_tool(
            ctx,
            ORDER_TOOL,
            {"order_id": order_id, "customer_id": inp.customer_id},
            traceparent=inp.traceparent,
            acting_for=deps.acting_for(inp),  # tool servers take the customer from it
        )
    except AccordError as error:
        if error.code is ErrorCode.NOT_FOUND:
            return None
        raise
    return from_peer(OrderFacts, found, ORDER_TOOL)


def _result(decision: RefundDecision, said: Inquiry, explanation: str) -> RefundResult:
    return RefundResult(
        decision=decision,
        order_id=said.order_id,
        rule=None,
        amount_cents=0,
        reasons=[],
        receipt=None,
        approved_by=None,
        explanation=explanation,
    )
