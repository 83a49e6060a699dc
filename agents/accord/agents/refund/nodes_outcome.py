"""decide (the join), approval, and the three ends: refund, explain, rejected.

Each end returns the orchestrator skill's output (refund.request): decision, order, rule,
amount, reasons, receipt, approver, and an explanation in the customer's language.
"""

from __future__ import annotations

from typing import Any, Final

from accord.agents.models import DecisionFacts, Language, Outcome
from accord.agents.refund.facts import WorkflowInput, refund_key
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.testhooks import pause
from accord.agents.workflow import NodeContext, Route
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WaitingReason

REFUNDED: Final = "refunded"
REJECTED: Final = "rejected"
NOT_ELIGIBLE: Final = "not_eligible"
ORDER_NOT_FOUND: Final = "order_not_found"
APPROVE: Final = "approve"
REJECT: Final = "reject"
MAX_DETAIL: Final = 300


async def decide(deps: Deps, ctx: NodeContext) -> Route:
    order, policy, risk = (dict(ctx.outputs[n]) for n in ("order", "policy", "risk"))
    asked = dict(ctx.outputs["intake"])
    summary: dict[str, Any] = {
        "order_id": asked["order_id"],
        "currency": order.get("currency"),
        "rule": policy.get("rule"),
        "amount_cents": int(policy.get("max_refund_cents") or 0),
        "policy": policy.get("explanation"),
        "risk": risk.get("risk"),
        "score": risk.get("score"),
        "signals": list(risk.get("signals") or []),
    }
    if not order.get("found") or not policy.get("found") or not risk.get("found"):
        return Route("explain", {**summary, "rule": ORDER_NOT_FOUND, "amount_cents": 0})
    if not policy.get("eligible") or summary["amount_cents"] <= 0:
        return Route("explain", summary)
    if risk.get("risk") == "high":
        return Route("approval", summary)
    return Route("refund", summary)


async def approval(deps: Deps, ctx: NodeContext) -> Route:
    inp = WorkflowInput.model_validate(ctx.input)
    summary = dict(ctx.outputs["decide"])
    ask = {**summary, "customer_id": inp.customer_id}
    # A timeout makes this call raise RETRYABLE_TIMEOUT: the workflow fails with that code.
    answer = ctx.interrupt(WaitingReason.APPROVAL, ask, timeout_s=deps.settings.approval_timeout_s)
    value = answer.value if isinstance(answer.value, dict) else {}
    decision = APPROVE if value.get("decision") == APPROVE else REJECT
    return Route(
        decision,
        {"decision": decision, "note": value.get("note") or "", "approver": value.get("approver")},
    )


async def refund(deps: Deps, ctx: NodeContext) -> dict[str, Any]:
    inp = WorkflowInput.model_validate(ctx.input)
    summary = dict(ctx.outputs["decide"])
    asked = dict(ctx.outputs["intake"])
    approved = ctx.outputs.get("approval")
    approver = approved.get("approver") if isinstance(approved, dict) else None
    order_id = str(summary["order_id"])
    key = refund_key(order_id)
    # Ask first, always: a missing completion event never proves the refund did not happen.
    found = await deps.tools.call(
        "refunds.get",
        {"idempotency_key": key, "customer_id": inp.customer_id},
        traceparent=inp.traceparent,
    )
    reasons = _reasons(summary, approved)
    if found.get("found") and isinstance(found.get("receipt"), dict):
        receipt = dict(found["receipt"])
        reasons.append(f"the refund under key {key} had already been issued; paid once only")
    else:
        await pause("refund.before_issue", order_id)
        issued = await deps.tools.call(
            "refunds.issue",
            {
                "order_id": order_id,
                "customer_id": inp.customer_id,
                "amount_cents": int(summary["amount_cents"]),
                "reason": str(asked.get("reason") or "other"),
                "approved_by": approver,
            },
            idempotency_key=key,
            traceparent=inp.traceparent,
        )
        await pause("refund.after_issue", order_id)
        receipt = dict(issued["receipt"])
    explanation = await deps.model(inp).explain(
        DecisionFacts(
            outcome=Outcome.REFUNDED,
            language=Language(asked["language"]),
            order_id=order_id,
            amount=_money(int(receipt["amount_cents"])),
            currency=receipt.get("currency"),
            refund_id=receipt.get("receipt_id"),
        )
    )
    return _final(
        REFUNDED,
        summary,
        reasons,
        explanation,
        receipt=receipt,
        approver=approver,
        amount=int(receipt["amount_cents"]),
    )


async def explain(deps: Deps, ctx: NodeContext) -> dict[str, Any]:
    inp = WorkflowInput.model_validate(ctx.input)
    summary = dict(ctx.outputs["decide"])
    asked = dict(ctx.outputs["intake"])
    if summary["rule"] == ORDER_NOT_FOUND:
        detail = f"no order {summary['order_id']} was found for your account"
        reasons = [detail]
    else:
        detail = str(summary.get("policy") or summary.get("rule") or "")
        reasons = _reasons(summary, None)
    explanation = await deps.model(inp).explain(
        DecisionFacts(
            outcome=Outcome.DENIED,
            language=Language(asked["language"]),
            order_id=summary["order_id"],
            rule=summary.get("rule"),
            detail=detail[:MAX_DETAIL] or None,
        )
    )
    return _final(NOT_ELIGIBLE, summary, reasons, explanation, amount=0)


async def rejected(deps: Deps, ctx: NodeContext) -> dict[str, Any]:
    inp = WorkflowInput.model_validate(ctx.input)
    summary = dict(ctx.outputs["decide"])
    asked = dict(ctx.outputs["intake"])
    decided = dict(ctx.outputs.get("approval") or {})
    note = str(decided.get("note") or "")
    explanation = await deps.model(inp).explain(
        DecisionFacts(
            outcome=Outcome.REJECTED,
            language=Language(asked["language"]),
            order_id=summary["order_id"],
            rule=summary.get("rule"),
            detail=note[:MAX_DETAIL] or None,
        )
    )
    return _final(
        REJECTED,
        summary,
        _reasons(summary, decided),
        explanation,
        amount=0,
        approver=decided.get("approver"),
    )


def _reasons(summary: dict[str, Any], approved: Any) -> list[str]:
    reasons: list[str] = []
    if summary.get("policy"):
        reasons.append(f"policy ({summary.get('rule')}): {summary['policy']}")
    if summary.get("risk"):
        signals = ", ".join(summary.get("signals") or []) or "no risk signals"
        reasons.append(f"risk {summary['risk']} (score {summary.get('score')}): {signals}")
    if isinstance(approved, dict) and approved.get("decision"):
        note = f": {approved['note']}" if approved.get("note") else ""
        reasons.append(f"{approved['decision']} by approver {approved.get('approver')}{note}")
    return reasons


def _final(
    decision: str,
    summary: dict[str, Any],
    reasons: list[str],
    explanation: str,
    *,
    amount: int,
    receipt: dict[str, Any] | None = None,
    approver: Any = None,
) -> dict[str, Any]:
    return {
        "decision": decision,
        "order_id": summary.get("order_id"),
        "rule": summary.get("rule"),
        "amount_cents": amount,
        "reasons": reasons,
        "receipt": receipt,
        "approved_by": approver if isinstance(approver, str) else None,
        "explanation": explanation,
    }


def _money(cents: int) -> str:
    if cents < 0:
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, "a refund amount cannot be negative")
    return f"{cents // 100}.{cents % 100:02d}"
