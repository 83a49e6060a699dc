"""The after-sales refund policy as a pure function: facts in, a decision out.

No I/O and no protocol here, so every rule is unit-tested directly and the A2A agent in
:mod:`accord.agents.policy` stays a thin adapter. Rules are checked in this order; the first
that applies decides:

    1. not delivered (status is not "delivered", or no delivery date)    -> not_delivered
    2. nothing left to refund (refundable_cents == 0)                    -> already_refunded
    3. reason "damaged":
         more than 30 days since delivery                                -> outside_window
         no evidence yet                                                 -> ask for evidence
         evidence given                                                  -> damage_with_evidence
       (a damaged item is refunded even when it was final sale: the customer did not get
       what was sold)
    4. final-sale item                                                   -> final_sale
    5. more than 30 days since delivery                                  -> outside_window
    6. requested amount above the refundable rest          -> amount_exceeds_refundable (capped)
    7. otherwise                                                         -> within_window

The decision is a rule code with its parameters (``params``: the order id, days since delivery,
the window, the amounts in cents, the status): the caller says it to its customer in their
language. ``explanation`` is the same in English, kept for callers of contract 1.0
(compat.POLICY_ENGLISH_EXPLANATION).

Amounts above the refundable rest are CAPPED, not refused: the decision is eligible, its rule
is ``amount_exceeds_refundable`` and ``max_refund_cents`` is the refundable rest, so the caller
refunds at most that and can tell the customer why.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

from accord.contracts.declared import shaped_by, skill_field
from accord.refund_contracts.domain import (
    CUSTOMER_ID_PATTERN,
    ORDER_ID_PATTERN,
    OrderStatus,
    PolicyRule,
    RefundReason,
)

RETURN_WINDOW_DAYS: Final = 30
MIN_EVIDENCE_CHARS: Final = 3  # "ok" is not a description; a photo ref or a sentence is


@shaped_by(skill_field("policy-check", "refund.policy", "order"), "refund.policy input order")
class PolicyOrder(BaseModel):
    """The skill input's ``order``: the facts of the order the policy reads (a part of what
    orders.lookup answers, whose type is :class:`accord.refund_contracts.orders.PolicyOrder`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    order_id: str
    total_cents: int = Field(ge=0)
    refunded_cents: int = Field(ge=0)
    refundable_cents: int = Field(ge=0)
    final_sale: bool
    days_since_delivery: int | None = Field(default=None, ge=0)
    status: str


class PolicyRequest(BaseModel):
    """The skill input (refund.policy)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    order: PolicyOrder | None = None  # given by the caller, or looked up from the ids below
    order_id: str | None = Field(default=None, pattern=ORDER_ID_PATTERN)
    customer_id: str | None = Field(default=None, pattern=CUSTOMER_ID_PATTERN)
    reason: RefundReason
    requested_cents: int | None = Field(default=None, ge=1)
    evidence: str | None = Field(default=None, max_length=2000)

    @model_validator(mode="after")
    def _facts_or_ids(self) -> PolicyRequest:
        if self.order is None and (self.order_id is None or self.customer_id is None):
            raise ValueError("give either order facts or order_id and customer_id")
        return self

    def with_evidence(self, evidence: str) -> PolicyRequest:
        return self.model_copy(update={"evidence": evidence})

    def with_order(self, order: PolicyOrder) -> PolicyRequest:
        return self.model_copy(update={"order": order})


class PolicyDecision(BaseModel):
    """The skill output (refund.policy)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eligible: bool
    rule: PolicyRule
    max_refund_cents: int = Field(ge=0)
    explanation: str  # English; optional in contract 1.1 (callers render ``rule`` + ``params``)
    params: dict[str, int | str | None] = Field(default_factory=dict)


def decision_params(request: PolicyRequest) -> dict[str, int | str | None]:
    """The facts a rule's sentence names (all of them, whichever rule decided)."""
    order = _facts(request)
    return {
        "order_id": order.order_id,
        "status": order.status,
        "days_since_delivery": order.days_since_delivery,
        "window_days": RETURN_WINDOW_DAYS,
        "total_cents": order.total_cents,
        "refunded_cents": order.refunded_cents,
        "refundable_cents": order.refundable_cents,
        "requested_cents": request.requested_cents,
    }


class EvidenceNeeded(BaseModel):
    """The policy cannot decide yet: it needs a description or a photo reference."""

    model_config = ConfigDict(frozen=True)

    question: str


EVIDENCE_QUESTION: Final = (
    "You said the item arrived damaged. Please describe the damage or give a photo "
    "reference (for example a link or an upload id) so the claim can be checked."
)


def has_evidence(evidence: str | None) -> bool:
    return evidence is not None and len(evidence.strip()) >= MIN_EVIDENCE_CHARS


def evaluate(request: PolicyRequest) -> PolicyDecision | EvidenceNeeded:
    """Apply the rules in the documented order (the request must carry the order facts)."""
    outcome = _decide(request)
    if isinstance(outcome, EvidenceNeeded):
        return outcome
    return outcome.model_copy(update={"params": decision_params(request)})


def _decide(request: PolicyRequest) -> PolicyDecision | EvidenceNeeded:
    order = _facts(request)
    refundable = order.refundable_cents
    if order.status != OrderStatus.DELIVERED or order.days_since_delivery is None:
        return _deny(
            PolicyRule.NOT_DELIVERED,
            f"Order {order.order_id} has not been delivered yet (status: "
            f"{order.status}), so it cannot be refunded as a return. If it is late, "
            "wait for delivery or ask for the shipment to be traced.",
        )
    if refundable == 0:
        return _deny(
            PolicyRule.ALREADY_REFUNDED,
            f"Order {order.order_id} has already been refunded in full "
            f"({_money(order.refunded_cents)}); nothing is left to refund.",
        )
    days = order.days_since_delivery
    if request.reason is RefundReason.DAMAGED:
        if days > RETURN_WINDOW_DAYS:
            return _outside_window(order.order_id, days)
        if not has_evidence(request.evidence):
            return EvidenceNeeded(question=EVIDENCE_QUESTION)
        return _allow(
            PolicyRule.DAMAGE_WITH_EVIDENCE,
            request,
            "The item arrived damaged and the claim is supported by evidence, "
            "so it can be refunded",
        )
    if order.final_sale:
        return _deny(
            PolicyRule.FINAL_SALE,
            f"Order {order.order_id} contains a final-sale item; final-sale items "
            "cannot be returned or refunded unless they arrived damaged.",
        )
    if days > RETURN_WINDOW_DAYS:
        return _outside_window(order.order_id, days)
    if request.requested_cents is not None and request.requested_cents > refundable:
        return PolicyDecision(
            eligible=True,
            rule=PolicyRule.AMOUNT_EXCEEDS_REFUNDABLE,
            max_refund_cents=refundable,
            explanation=f"The request of {_money(request.requested_cents)} is more than the "
            f"{_money(refundable)} that can still be refunded on order "
            f"{order.order_id}; at most {_money(refundable)} will be refunded.",
        )
    return _allow(
        PolicyRule.WITHIN_WINDOW,
        request,
        f"Order {order.order_id} was delivered {days} day{'s' if days != 1 else ''} "
        f"ago, within the {RETURN_WINDOW_DAYS}-day return window",
    )


def _facts(request: PolicyRequest) -> PolicyOrder:
    if request.order is None:
        raise ValueError("evaluate() needs the order facts; look them up first")
    return request.order


def _allow(rule: PolicyRule, request: PolicyRequest, why: str) -> PolicyDecision:
    refundable = _facts(request).refundable_cents
    requested = request.requested_cents
    if requested is not None and requested > refundable:
        tail = (
            f"; the request exceeds what is left, so at most {_money(refundable)} will be refunded."
        )
    else:
        tail = f"; up to {_money(refundable)} can be refunded."
    return PolicyDecision(
        eligible=True, rule=rule, max_refund_cents=refundable, explanation=why + tail
    )


def _deny(rule: PolicyRule, explanation: str) -> PolicyDecision:
    return PolicyDecision(eligible=False, rule=rule, max_refund_cents=0, explanation=explanation)


def _outside_window(order_id: str, days: int) -> PolicyDecision:
    return _deny(
        PolicyRule.OUTSIDE_WINDOW,
        f"Order {order_id} was delivered {days} days ago, outside the "
        f"{RETURN_WINDOW_DAYS}-day return window.",
    )


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"
