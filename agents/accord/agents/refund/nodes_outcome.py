"""decide (the join), approval, and the three ends: refund, explain, rejected.

Each end returns the orchestrator skill's output (refund.request, `RefundResult`): decision,
order, rule, amount, reasons, receipt, approver, and an explanation in the customer's
language.

Every sentence is rendered in that language from the checks' codes (models/messages.py):
policy-check's English ``explanation`` is never shown to the customer.

The receipt rule: a receipt the ledger already holds under the refund's key (found by
``refunds.get``, or replayed by ``refunds.issue``) must be this refund (amount, currency, order,
customer, key). Otherwise the workflow stops with IDEMPOTENCY_CONFLICT, the customer is told
neutrally that a person will look at it (never an amount), and the approvers are told
(attention.py). ``refunds.issue`` answering IDEMPOTENCY_CONFLICT (issued under the key in
between) stops the same way.

Approval by the money: payments refuses a refund no approver approved when what was paid
without one would reach the approval threshold (POLICY_DENIED, ``reason: approval_required``;
nothing was paid). risk-check normally sees the same totals and the workflow asks up front
(``approval``); when it did not (two requests at once, through two replicas), ``refund`` asks
the approver itself: the workflow waits for an approval exactly as ``approval`` does (same
queue item, same ``refund.approve``), and on the answer pays with the approver or ends
rejected.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, NoReturn

from accord.agents.models import DecisionFacts, Language, Outcome
from accord.agents.models.messages import risk_sentence, rule_sentence, say
from accord.agents.models.money_text import format_money
from accord.agents.refund import money
from accord.agents.refund.attention import Attention, log_attention
from accord.agents.refund.facts import WorkflowInput, order_refund_key
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.outputs import (
    ApproverAnswer,
    NotFound,
    OrderFound,
    PolicyVerdict,
    Receipt,
    RefundResult,
    RiskVerdict,
    Summary,
    Understood,
    Upstream,
    from_peer,
    receipt_mismatches,
)
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WaitingReason
from accord.refund_contracts.domain import (
    ApprovalDecision,
    PaymentRefusal,
    PolicyRule,
    RefundDecision,
)
from accord.runtime.workflow import NodeContext, Route

logger = logging.getLogger(__name__)

# What the customer is told when their refund stopped on a receipt that is not theirs.
NEEDS_A_PERSON: Final[Mapping[Language, str]] = MappingProxyType(
    {
        Language.EN: (
            "We could not complete the refund automatically. A person from our team will look "
            "at it and get back to you; you do not need to do anything."
        ),
        Language.ZH: (
            "我们暂时无法自动完成这笔退款，工作人员会尽快核查并与您联系，您无需再做任何操作。"
        ),
    }
)
ORDER_NOT_FOUND: Final = "order_not_found"  # decide's rule when a check found no such order
LIST_TOOL: Final = "refunds.list"
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
        params=_rule_params(verdict, order),
    )
    if isinstance(order, NotFound) or verdict is None or scored is None:
        not_found = summary.model_copy(update={"rule": ORDER_NOT_FOUND, "amount_cents": 0})
        return Route("explain", not_found)
    requested = money.requested_cents(upstream.intake().amount, order.refundable_cents)
    if requested is not None and verdict.eligible:
        if requested > verdict.max_refund_cents:
            # More than can be refunded: nothing is paid, the customer is told the maximum.
            above = summary.model_copy(
                update={
                    "rule": PolicyRule.AMOUNT_EXCEEDS_REFUNDABLE.value,
                    "amount_cents": 0,
                    "params": {
                        **summary.params,
                        "requested_cents": requested,
                        "refundable_cents": verdict.max_refund_cents,
                    },
                }
            )
            return Route("explain", above)
        summary = summary.model_copy(update={"amount_cents": requested})  # the amount named
    if not verdict.eligible or summary.amount_cents <= 0:
        return Route("explain", summary)
    limit = WorkflowInput.model_validate(ctx.input).max_refund_cents
    if limit is not None and summary.amount_cents > limit:
        # The caller's envelope bounds what may be paid (ENV-007): above it, nothing is paid
        # (not capped: the customer decides whether to ask for less), nor asked of an approver.
        over = summary.model_copy(
            update={
                "rule": money.AMOUNT_ABOVE_LIMIT,
                "amount_cents": 0,
                "params": {
                    **summary.params,
                    "requested_cents": summary.amount_cents,
                    "limit_cents": limit,
                },
            }
        )
        return Route("explain", over)
    if scored.risk == "high":
        return Route("approval", summary)
    return Route("refund", summary)


async def approval(deps: Deps, ctx: NodeContext) -> Route:
    inp = WorkflowInput.model_validate(ctx.input)
    upstream = Upstream(ctx.outputs)
    ask = _approval_ask(inp, upstream, upstream.decide())
    # A timeout makes this call raise RETRYABLE_TIMEOUT: the workflow fails with that code.
    answer = ctx.interrupt(WaitingReason.APPROVAL, ask, timeout_s=deps.settings.approval_timeout_s)
    decided = _decision(answer.value)
    return Route(decided.decision, decided)


def _approval_ask(inp: WorkflowInput, upstream: Upstream, summary: Summary) -> dict[str, Any]:
    """What an approver is shown (the queue item's facts)."""
    return {
        **summary.model_dump(mode="json"),
        "customer_id": inp.customer_id,
        **_case_facts(inp, upstream),
    }


def _decision(value: Any) -> ApproverAnswer:
    """An approver's answer (the value ``refund.approve`` resumed the workflow with)."""
    body = value if isinstance(value, dict) else {}
    approver = body.get("approver")
    return ApproverAnswer(
        decision=(
            ApprovalDecision.APPROVE
            if body.get("decision") == ApprovalDecision.APPROVE
            else ApprovalDecision.REJECT
        ),
        note=str(body.get("note") or ""),
        approver=approver if isinstance(approver, str) else None,
    )


def _escalated(ctx: NodeContext) -> ApproverAnswer | None:
    """The answer to the approval ``refund`` asked for itself (its first interrupt), if any."""
    answer = ctx.answers.get(0)
    return _decision(answer.value) if answer is not None else None


def _needs_approver(error: AccordError) -> bool:
    return (
        error.code is ErrorCode.POLICY_DENIED
        and error.details.get("reason") == PaymentRefusal.APPROVAL_REQUIRED.value
    )


async def refund(deps: Deps, ctx: NodeContext, *, key_per_order: bool = False) -> RefundResult:
    """Issue the refund decided, exactly once per request. ``key_per_order``: graphs 1 and 2
    keyed the refund by order only (``refund:<order_id>``); a workflow that started on them
    keeps that key, so a resumed attempt finds what its first attempt paid."""
    inp = WorkflowInput.model_validate(ctx.input)
    upstream = Upstream(ctx.outputs)
    summary, asked = upstream.decide(), upstream.intake()
    escalated = _escalated(ctx)  # payments asked for an approver, and one answered
    if escalated is not None and escalated.decision is not ApprovalDecision.APPROVE:
        return await _rejected(deps, ctx, inp, summary, asked, escalated)
    approved = upstream.approval() or escalated
    approver = approved.approver if approved else None
    order_id = summary.order_id
    key = (
        order_refund_key(order_id) if key_per_order else money.refund_key(order_id, ctx.workflow_id)
    )
    found: dict[str, Any] = {"found": False}
    if ctx.attempt > 1 or key_per_order:
        # A resumed or retried attempt asks first: a missing completion event never proves
        # the refund did not happen. A first attempt need not: the runtime appends its
        # node_started (attempt 1) durably before the node runs, so no earlier attempt of this
        # node exists, and the key names this workflow, so nobody else wrote under it. (A key
        # per order, graphs 1 and 2, is shared by every workflow on the order: always ask.)
        # Should the log still be wrong, refunds.issue under the key replays or refuses; it
        # never pays twice.
        found = await _under_key(deps, ctx, inp, key)
    reasons = _reasons(summary, approved, asked.language)
    before = _refunded_before(upstream.order(), summary, asked.language)
    if before:
        reasons.append(before)
    if found.get("found") and isinstance(found.get("receipt"), dict):
        receipt = from_peer(Receipt, found["receipt"], "refunds.get")
        await _must_match(deps, ctx, inp, summary, asked, key, receipt)
        reasons.append(f"the refund under key {key} had already been issued; paid once only")
    else:
        try:
            issued = await deps.call_tool(
                ctx,
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
        except AccordError as error:
            if _needs_approver(error) and approver is None:
                # Nothing was paid: the workflow waits for an approver (a timeout raises
                # RETRYABLE_TIMEOUT, as in ``approval``), then this node runs again.
                ask = {**_approval_ask(inp, upstream, summary), "payments": error.details}
                ctx.interrupt(
                    WaitingReason.APPROVAL, ask, timeout_s=deps.settings.approval_timeout_s
                )
                raise  # not reached: an answered interrupt was handled above
            if error.code is not ErrorCode.IDEMPOTENCY_CONFLICT:
                overtaken = await _overtaken(deps, ctx, inp, summary, asked.language, error)
                if overtaken is not None:
                    return overtaken
                raise
            # Something was issued under the key already (a first attempt does not ask
            # before): it is this refund if it matches, else the approvers are told what
            # pre-empted it.
            issued = await _under_key(deps, ctx, inp, key)
            if not (issued.get("found") and isinstance(issued.get("receipt"), dict)):
                await _stop(deps, ctx, inp, summary, asked, key, None, [])
        receipt = from_peer(Receipt, issued.get("receipt"), "refunds.issue")
        # A replayed answer is checked too: the ledger replays only identical arguments, but
        # the customer is never told an amount the workflow did not decide.
        await _must_match(deps, ctx, inp, summary, asked, key, receipt)
    explanation = await deps.model(inp, ctx).explain(
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
        RefundDecision.REFUNDED,
        summary,
        reasons,
        explanation,
        receipt=receipt,
        approver=approver,
        amount=receipt.amount_cents,
    )


async def _under_key(deps: Deps, ctx: NodeContext, inp: WorkflowInput, key: str) -> dict[str, Any]:
    """The ledger's answer for the refund's key: ``found`` and the receipt issued under it."""
    return await deps.call_tool(
        ctx,
        "refunds.get",
        {"idempotency_key": key, "customer_id": inp.customer_id},
        traceparent=inp.traceparent,
        acting_for=deps.acting_for(inp),
    )


def _case_facts(inp: WorkflowInput, upstream: Upstream) -> dict[str, Any]:
    """What an approver reads besides the decision: the customer's own words (and evidence),
    the order's items, and what was refunded on it before (the ledger's, via orders.lookup)."""
    said = upstream.intake()
    facts: dict[str, Any] = {"request": inp.text[:MAX_DETAIL], "evidence": said.evidence}
    order = upstream.order()
    if isinstance(order, OrderFound):
        facts["items"] = [f"{i.quantity} x {i.name}" for i in order.items]
        facts["refunded_cents"] = order.refunded_cents
        facts["refundable_cents"] = order.refundable_cents
        facts["earlier_refunds"] = len(order.refunds)
    return facts


async def _must_match(
    deps: Deps,
    ctx: NodeContext,
    inp: WorkflowInput,
    summary: Summary,
    asked: Understood,
    key: str,
    receipt: Receipt,
) -> None:
    """The receipt under the refund's key is this refund (amount, currency, order, customer,
    key), or the workflow stops: someone else issued under the key first (a pre-empted refund),
    and accepting their receipt would tell the customer an amount nobody decided."""
    mismatched = receipt_mismatches(
        receipt,
        idempotency_key=key,
        order_id=summary.order_id,
        customer_id=inp.customer_id,
        amount_cents=summary.amount_cents,
        currency=summary.currency,
    )
    if mismatched:
        await _stop(deps, ctx, inp, summary, asked, key, receipt, mismatched)


async def _stop(
    deps: Deps,
    ctx: NodeContext,
    inp: WorkflowInput,
    summary: Summary,
    asked: Understood,
    key: str,
    receipt: Receipt | None,
    mismatched: list[str],
) -> NoReturn:
    """Tell the approvers (log + queue), then fail the workflow with IDEMPOTENCY_CONFLICT and a
    neutral sentence for the customer: no amount, no receipt (it is not theirs to trust)."""
    item = Attention(
        task_id=ctx.workflow_id,
        app=inp.app,
        customer_id=inp.customer_id,
        order_id=summary.order_id,
        idempotency_key=key,
        expected_amount_cents=summary.amount_cents,
        expected_currency=summary.currency,
        found=receipt.model_dump(mode="json") if receipt is not None else None,
        mismatched=mismatched,
    )
    log_attention(item)
    if deps.attention is not None:
        try:
            await deps.attention(item)
        except Exception:  # the log line above still told; the customer's answer must not change
            logger.exception("refund task %s: the attention item was not recorded", item.task_id)
    raise AccordError(
        ErrorCode.IDEMPOTENCY_CONFLICT,
        NEEDS_A_PERSON[asked.language],
        {"order_id": summary.order_id, "needs_attention": True},
    )


async def explain(deps: Deps, ctx: NodeContext) -> RefundResult:
    inp = WorkflowInput.model_validate(ctx.input)
    upstream = Upstream(ctx.outputs)
    summary, asked = upstream.decide(), upstream.intake()
    lang = asked.language
    if summary.rule == PolicyRule.ALREADY_REFUNDED:
        answered = await _already_refunded(deps, ctx, inp, summary, lang)
        if answered is not None:
            return answered
    if summary.rule == PolicyRule.AMOUNT_EXCEEDS_REFUNDABLE:
        told = money.sentence(
            "amount_above_refundable",
            lang,
            order_id=summary.order_id,
            requested=_amount(summary.params.get("requested_cents"), summary.currency, lang),
            refundable=_amount(summary.params.get("refundable_cents"), summary.currency, lang),
        )
        return _final(RefundDecision.NOT_ELIGIBLE, summary, [told], told, amount=0)
    if summary.rule == money.AMOUNT_ABOVE_LIMIT:
        told = money.sentence(
            "amount_above_limit",
            lang,
            order_id=summary.order_id,
            amount=_amount(summary.params.get("requested_cents"), summary.currency, lang),
            limit=_amount(summary.params.get("limit_cents"), summary.currency, lang),
        )
        return _final(RefundDecision.NOT_ELIGIBLE, summary, [told], told, amount=0)
    if summary.rule == ORDER_NOT_FOUND:
        outcome, detail = Outcome.NOT_FOUND, ""
        reasons = [say(ORDER_NOT_FOUND, lang, order_id=summary.order_id)]
    else:
        outcome = Outcome.DENIED
        detail = rule_sentence(summary.rule or "", summary.params, summary.currency, lang)
        reasons = _reasons(summary, None, lang)
    explanation = await deps.model(inp, ctx).explain(
        DecisionFacts(
            outcome=outcome,
            language=lang,
            order_id=summary.order_id,
            rule=summary.rule,
            detail=detail[:MAX_DETAIL] or None,
        )
    )
    return _final(RefundDecision.NOT_ELIGIBLE, summary, reasons, explanation, amount=0)


async def rejected(deps: Deps, ctx: NodeContext) -> RefundResult:
    inp = WorkflowInput.model_validate(ctx.input)
    upstream = Upstream(ctx.outputs)
    return await _rejected(
        deps, ctx, inp, upstream.decide(), upstream.intake(), upstream.approval()
    )


async def _rejected(
    deps: Deps,
    ctx: NodeContext,
    inp: WorkflowInput,
    summary: Summary,
    asked: Understood,
    decided: ApproverAnswer | None,
) -> RefundResult:
    note = decided.note if decided else ""
    explanation = await deps.model(inp, ctx).explain(
        DecisionFacts(
            outcome=Outcome.REJECTED,
            language=asked.language,
            order_id=summary.order_id,
            rule=summary.rule,
            detail=note[:MAX_DETAIL] or None,
        )
    )
    return _final(
        RefundDecision.REJECTED,
        summary,
        _reasons(summary, decided, asked.language),
        explanation,
        amount=0,
        approver=decided.approver if decided else None,
    )


async def _overtaken(
    deps: Deps,
    ctx: NodeContext,
    inp: WorkflowInput,
    summary: Summary,
    language: Language,
    error: AccordError,
) -> RefundResult | None:
    """The ledger refused the amount because another request of the same order was paid since
    this one's checks (two requests at once): nothing moved, so the customer is told what is
    true now - already refunded, or the most that is left - instead of a failure. None for any
    other error."""
    refundable = error.details.get("refundable_cents")
    if error.code is not ErrorCode.POLICY_DENIED or not isinstance(refundable, int):
        return None
    # The rule that now holds, not the one policy-check applied before the other refund.
    rule = PolicyRule.ALREADY_REFUNDED if refundable == 0 else PolicyRule.AMOUNT_EXCEEDS_REFUNDABLE
    summary = summary.model_copy(update={"rule": rule.value})
    if refundable == 0:
        answered = await _already_refunded(deps, ctx, inp, summary, language)
        if answered is not None:
            return answered
    told = money.sentence(
        "amount_above_refundable",
        language,
        order_id=summary.order_id,
        requested=_amount(summary.amount_cents, summary.currency, language),
        refundable=_amount(refundable, summary.currency, language),
    )
    return _final(RefundDecision.NOT_ELIGIBLE, summary, [told], told, amount=0)


async def _already_refunded(
    deps: Deps, ctx: NodeContext, inp: WorkflowInput, summary: Summary, language: Language
) -> RefundResult | None:
    """Nothing is left to refund: the answer is that fact with the newest refund's receipt (the
    ledger's, by refunds.list) and its date. None when the ledger lists none (an order of
    nothing refundable that was never refunded), or when the request has no tool call left for
    the lookup: the rule's own sentence then (true, and free, like a template explanation)."""
    try:
        listed = await deps.call_tool(
            ctx,
            LIST_TOOL,
            {"customer_id": inp.customer_id, "order_id": summary.order_id},
            traceparent=inp.traceparent,
            acting_for=deps.acting_for(inp),
        )
    except AccordError as error:
        if error.code is not ErrorCode.BUDGET_EXHAUSTED:
            raise
        return None
    receipts = listed.get("refunds") or []
    if not receipts:
        return None
    receipt = from_peer(Receipt, receipts[0], LIST_TOOL)
    total = listed.get("total_cents")
    told = money.sentence(
        "already_refunded",
        language,
        order_id=summary.order_id,
        amount=_amount(
            total if isinstance(total, int) else receipt.amount_cents, receipt.currency, language
        ),
        date=receipt.created_at[:10],
        receipt_id=receipt.receipt_id,
    )
    return _final(RefundDecision.ALREADY_REFUNDED, summary, [told], told, amount=0, receipt=receipt)


def _refunded_before(
    order: OrderFound | NotFound, summary: Summary, language: Language
) -> str | None:
    """A partly refunded order: what was refunded before and what remained (None if nothing)."""
    if not isinstance(order, OrderFound) or order.refunded_cents <= 0:
        return None
    return money.sentence(
        "refunded_before",
        language,
        order_id=order.order_id,
        refunded=_amount(order.refunded_cents, order.currency, language),
        refundable=_amount(order.refundable_cents, order.currency, language),
    )


def _amount(cents: object, currency: str | None, language: Language) -> str:
    return format_money(cents if isinstance(cents, int) else 0, currency, language)


def _reasons(summary: Summary, approved: ApproverAnswer | None, language: Language) -> list[str]:
    """What decided it, in the customer's language (the approver's note as written)."""
    reasons: list[str] = []
    if summary.rule:
        reasons.append(rule_sentence(summary.rule, summary.params, summary.currency, language))
    if summary.risk:
        reasons.append(risk_sentence(summary.risk, summary.score, summary.signals, language))
    if approved is not None:
        decided = say(f"decision.{approved.decision}", language)
        line = say("approver_decided", language, decision=decided, approver=approved.approver)
        reasons.append(f"{line} {approved.note}".strip() if approved.note else line)
    return reasons


def _rule_params(
    verdict: PolicyVerdict | None, order: OrderFound | NotFound
) -> dict[str, int | str | None]:
    """policy-check's parameters; from a 1.0 policy-check (none sent), the order's facts."""
    if verdict is None or verdict.params:
        return dict(verdict.params) if verdict else {}
    if not isinstance(order, OrderFound):
        return {}
    return {
        "order_id": order.order_id,
        "status": order.status,
        "days_since_delivery": order.days_since_delivery,
        "refunded_cents": order.refunded_cents,
        "refundable_cents": order.refundable_cents,
    }


def _final(
    decision: RefundDecision,
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
    """The decimal amount the model's facts carry (DecisionFacts.amount); a person reads it
    through format_money (explanations.py)."""
    if cents < 0:
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, "a refund amount cannot be negative")
    return f"{cents // 100}.{cents % 100:02d}"
