"""Refund risk scoring as a pure function of the amount and the customer's history.

Three hard signals make a refund high risk on their own (a human approver then decides):

    large_amount       amount_cents >= the approval threshold
                       (``ACCORD_APPROVAL_THRESHOLD_CENTS``, 50,000 = 500.00)
    frequent_refunds   3 or more refunds in the last 90 days
    chargebacks        any chargeback on record

Two soft signals raise the score but never make a refund high risk alone:

    new_account        account younger than 30 days
    high_refund_volume more than 100,000 cents refunded in the last 90 days

The score is a bounded sum of signal weights, so it is deterministic and monotone: adding a
signal never lowers it. ``risk`` is decided by the hard signals, not by a score threshold, so
that a reviewer can always tell which fact made a refund high risk.

The threshold is the one payments judges the money on: a refund no approver approved is paid
only while what was paid without one, plus it, stays below the threshold (per order, and per
customer over 90 days; tools/approval_rule.py). A request below it whose money would cross it
(the second $499 of a laptop) is refused by payments, and the orchestrator then asks an
approver (docs/refund-assistant.md, "Approval by the money").
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from accord.refund_contracts.domain import RiskLevel

FREQUENT_REFUNDS_90D: Final = 3
NEW_ACCOUNT_DAYS: Final = 30
HIGH_REFUND_VOLUME_CENTS: Final = 100_000
BASE_SCORE: Final = 0.05


class Signal(StrEnum):
    LARGE_AMOUNT = "large_amount"
    FREQUENT_REFUNDS = "frequent_refunds"
    CHARGEBACKS = "chargebacks"
    NEW_ACCOUNT = "new_account"
    HIGH_REFUND_VOLUME = "high_refund_volume"


HARD_SIGNALS: Final = frozenset({Signal.LARGE_AMOUNT, Signal.FREQUENT_REFUNDS, Signal.CHARGEBACKS})
WEIGHTS: Final[dict[Signal, float]] = {
    Signal.LARGE_AMOUNT: 0.5,
    Signal.FREQUENT_REFUNDS: 0.45,
    Signal.CHARGEBACKS: 0.6,
    Signal.NEW_ACCOUNT: 0.15,
    Signal.HIGH_REFUND_VOLUME: 0.15,
}


class RiskRequest(BaseModel):
    """The skill input (refund.risk)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    order_id: str
    customer_id: str
    amount_cents: int | None = Field(default=None, ge=0)  # None: the order's refundable amount


class CustomerHistory(BaseModel):
    """What customers.history returns (the fields the scoring reads)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    customer_id: str
    account_age_days: int = Field(ge=0)
    orders_total: int = Field(ge=0)
    orders_90d: int = Field(ge=0)
    refunds_90d: int = Field(ge=0)
    refunded_cents_90d: int = Field(ge=0)
    chargebacks: int = Field(ge=0)


class RiskAssessment(BaseModel):
    """The skill output (refund.risk)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    risk: RiskLevel
    score: float = Field(ge=0, le=1)
    signals: list[Signal]


def signals_of(amount_cents: int, history: CustomerHistory, threshold_cents: int) -> list[Signal]:
    """The signals present, in a stable order (hard ones first)."""
    found: list[Signal] = []
    if amount_cents >= threshold_cents:
        found.append(Signal.LARGE_AMOUNT)
    if history.refunds_90d >= FREQUENT_REFUNDS_90D:
        found.append(Signal.FREQUENT_REFUNDS)
    if history.chargebacks > 0:
        found.append(Signal.CHARGEBACKS)
    if history.account_age_days < NEW_ACCOUNT_DAYS:
        found.append(Signal.NEW_ACCOUNT)
    if history.refunded_cents_90d > HIGH_REFUND_VOLUME_CENTS:
        found.append(Signal.HIGH_REFUND_VOLUME)
    return found


def assess(amount_cents: int, history: CustomerHistory, threshold_cents: int) -> RiskAssessment:
    """The assessment of refunding ``amount_cents`` with ``history``, under the approval
    threshold the caller is configured with (``ACCORD_APPROVAL_THRESHOLD_CENTS``)."""
    signals = signals_of(amount_cents, history, threshold_cents)
    score = min(1.0, BASE_SCORE + sum(WEIGHTS[s] for s in signals))
    risk = RiskLevel.HIGH if HARD_SIGNALS.intersection(signals) else RiskLevel.LOW
    return RiskAssessment(risk=risk, score=round(score, 3), signals=signals)
