"""decide (the join), approval, and the three ends: refund, explain, rejected.

Each end returns the orchestrator skill's output (refund.request, `RefundResult`): decision,
order, rule, amount, reasons, receipt, approver, and an explanation in the customer's
language.
"""

from __future__ import annotations

from typing import Final, Literal

from accord.agents.models import DecisionFacts, Outcome
from accord.agents.refund.facts import WorkflowInput, refund_key
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.outputs import (
    ApprovalDecision,
    NotFound,
    PolicyVerdict,
    Receipt,
    RefundResult,
    RiskVerdict,
    Summary,
    Upstream,
    from_peer,
)
from accord.agents.refund.pause_points import pause
from accord.agents.workflow import NodeContext, Route
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WaitingReason

REFUNDED: Final = "refunded"
REJECTED: Final = "rejected"
NOT_ELIGIBLE: Final = "not_eligible"
ORDER_NOT_FOUND: Final = "order_not_found"
APPROVE: Final = "approve"
REJECT: Final = "reject"
Decided = Literal["refunded", "rejected", "not_eligible"]
MAX_DETAIL: Final = 300


async def decide(deps: Deps, ctx: NodeContext) -> Route:
    upstream = Upstream(ctx.outputs)
    order, policy, risk = upstream.order(), upstream.policy(), upstream.risk()
    verdict = policy if isinstance(policy, PolicyVerdict) else None
    scored = risk if isinstance(risk, RiskVerdict) else None
    summary = Summary(
        order_id=upstream.intake().order_id,
        currency=None if isinstance(order, NotFound) else order.currency,
        rule=verdict.rule if verdict else None,
        amount_cents=verdict.max_refund_cents if verdict else 0,
        policy=verdict.explanation if verdict else None,
        risk=scored.risk if scored else None,
        score=scored.score if scored else None,
        signals=list(scored.signals) if scored else [],
    )
    if isinstance(order, NotFound) or verdict is None or scored is None:
        not_found = summary.model_copy(update={"rule": ORDER_NOT_FOUND, "amount_cents": 0})
        return Route("explain", not_found)
    if not verdict.eligible or summary.amount_cents <= 0:
        return Route("explain", summary)
    if scored.risk == "high":
        return Route("approval", summary)
    return Route("refund", summary)


async def approval(deps: Deps, ctx: NodeContext) -> Route:
    inp = WorkflowInput.model_validate(ctx.input)
    summary = Upstream(ctx.outputs).decide()
    ask = {**summary.model_dump(mode="json"), "customer_id": inp.customer_id}
    # A timeout makes this call raise RETRYABLE_TIMEOUT: the workflow fails with that code.
    answer = ctx.interrupt(WaitingReason.APPROVAL, ask, timeout_s=deps.settings.approval_timeout_s)
    value = answer.value if isinstance(answer.value, dict) else {}
    approver = value.get("approver")
    decided = ApprovalDecision(
        decision=APPROVE if value.get("decision") == APPROVE else REJECT,
        note=str(value.get("note") or ""),
        approver=approver if isinstance(approver, str) else None,
    )
    return Route(decided.decision, decided)


async def refund(deps: Deps, ctx: NodeContext) -> RefundResult:
    inp = WorkflowInput.model_validate(ctx.input)
    upstream = Upstream(ctx.outputs)
    summary, asked, approved = upstream.decide(), upstream.intake(), upstream.approval()
    approver = approved.approver if approved else None
    order_id = summary.order_id
    key = refund_key(order_id)
    # Ask first, always: a missing completion event never proves the refund did not happen.
    found = await deps.tools.call(
        "refunds.get",
        {"idempotency_key": key, "customer_id": inp.customer_id},
        traceparent=inp.traceparent,
        acting_for=deps.acting_for(inp),
    )
    reasons = _reasons(summary, approved)
    if found.get("found") and isinstance(found.get("receipt"), dict):
        receipt = from_peer(Receipt, found["receipt"], "refunds.get")
        reasons.append(f"the refund under key {key} had already been issued; paid once only")
    else:
        await pause("refund.before_issue", order_id)
        issued = await deps.tools.call(
            "refunds.issue",
            {
                "order_id": order_id,
                "customer_id": inp.customer_id,
                "amount_cents": summary.amount_cents,
                "reason": asked.reason.value if asked.reason else "other",
            },
            idempotency_key=key,
            traceparent=inp.traceparent,
            # The approver travels in the verified delegation, not as an argument.
            acting_for=deps.acting_for(inp, approved_by=approver),
        )
        await pause("refund.after_issue", order_id)
        receipt = from_peer(Receipt, issued.get("receipt"), "refunds.issue")
    explanation = await deps.model(inp).explain(
        DecisionFacts(
            outcome=Outcome.REFUNDED,
            language=asked.language,
            order_id=order_id,
            amount=_money(receipt.amount_cents),
            currency=receipt.currency,
            refund_id=receipt.receipt_id,
        )
    )
    return _final(
        REFUNDED,
        summary,
        reasons,
        explanation,
        receipt=receipt,
        approver=approver,
        amount=receipt.amount_cents,
    )


async def explain(deps: Deps, ctx: NodeContext) -> RefundResult:
    inp = WorkflowInput.model_validate(ctx.input)
    upstream = Upstream(ctx.outputs)
    summary, asked = upstream.decide(), upstream.intake()
    if summary.rule == ORDER_NOT_FOUND:
        detail = f"no order {summary.order_id} was found for your account"
        reasons = [detail]
    else:
        detail = summary.policy or summary.rule or ""
        reasons = _reasons(summary, None)
    explanation = await deps.model(inp).explain(
        DecisionFacts(
            outcome=Outcome.DENIED,
            language=asked.language,
            order_id=summary.order_id,
            rule=summary.rule,
            detail=detail[:MAX_DETAIL] or None,
        )
    )
    return _final(NOT_ELIGIBLE, summary, reasons, explanation, amount=0)


async def rejected(deps: Deps, ctx: NodeContext) -> RefundResult:
    inp = WorkflowInput.model_validate(ctx.input)
    upstream = Upstream(ctx.outputs)
    summary, asked, decided = upstream.decide(), upstream.intake(), upstream.approval()
    note = decided.note if decided else ""
    explanation = await deps.model(inp).explain(
        DecisionFacts(
            outcome=Outcome.REJECTED,
            language=asked.language,
            order_id=summary.order_id,
            rule=summary.rule,
            detail=note[:MAX_DETAIL] or None,
        )
    )
    return _final(
        REJECTED,
        summary,
        _reasons(summary, decided),
        explanation,
        amount=0,
        approver=decided.approver if decided else None,
    )


def _reasons(summary: Summary, approved: ApprovalDecision | None) -> list[str]:
    reasons: list[str] = []
    if summary.policy:
        reasons.append(f"policy ({summary.rule}): {summary.policy}")
    if summary.risk:
        signals = ", ".join(summary.signals) or "no risk signals"
        reasons.append(f"risk {summary.risk} (score {summary.score}): {signals}")
    if approved is not None:
        note = f": {approved.note}" if approved.note else ""
        reasons.append(f"{approved.decision} by approver {approved.approver}{note}")
    return reasons


def _final(
    decision: Decided,
    summary: Summary,
    reasons: list[str],
    explanation: str,
    *,
    amount: int,
    receipt: Receipt | None = None,
    approver: str | None = None,
) -> RefundResult:
    return RefundResult(
        decision=decision,
        order_id=summary.order_id,
        rule=summary.rule,
        amount_cents=amount,
        reasons=reasons,
        receipt=receipt,
        approved_by=approver,
        explanation=explanation,
    )


def _money(cents: int) -> str:
    if cents < 0:
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, "a refund amount cannot be negative")
    return f"{cents // 100}.{cents % 100:02d}"
