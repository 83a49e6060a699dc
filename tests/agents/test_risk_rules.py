"""RiskLevel scoring: each signal, the high/low decision, and that the score is monotone."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from accord.agents.risk_rules import CustomerHistory, RiskAssessment, Signal
from accord.agents.risk_rules import assess as assess_under
from accord.refund_contracts.domain import RiskLevel
from accord.refund_contracts.settings import DEFAULT_APPROVAL_THRESHOLD_CENTS

LARGE_AMOUNT_CENTS = DEFAULT_APPROVAL_THRESHOLD_CENTS


def assess(amount_cents: int, facts: CustomerHistory) -> RiskAssessment:
    """The assessment under the default approval threshold."""
    return assess_under(amount_cents, facts, DEFAULT_APPROVAL_THRESHOLD_CENTS)


def history(**overrides: Any) -> CustomerHistory:
    facts: dict[str, Any] = {
        "customer_id": "C-01",
        "account_age_days": 400,
        "orders_total": 12,
        "orders_90d": 2,
        "refunds_90d": 0,
        "refunded_cents_90d": 0,
        "chargebacks": 0,
    }
    facts.update(overrides)
    return CustomerHistory.model_validate(facts)


def test_small_amount_good_history_is_low() -> None:
    a = assess(5999, history())
    assert (a.risk, a.signals) == (RiskLevel.LOW, [])
    assert a.score < 0.5


def test_large_amount_is_high() -> None:
    assert assess(LARGE_AMOUNT_CENTS - 1, history()).risk is RiskLevel.LOW
    a = assess(LARGE_AMOUNT_CENTS, history())
    assert (a.risk, a.signals) == (RiskLevel.HIGH, [Signal.LARGE_AMOUNT])


def test_the_threshold_is_the_callers_setting() -> None:
    assert assess_under(5999, history(), 5000).signals == [Signal.LARGE_AMOUNT]
    assert assess_under(5999, history(), 6000).signals == []


def test_three_refunds_in_90_days_is_high() -> None:
    assert assess(1000, history(refunds_90d=2)).risk is RiskLevel.LOW
    a = assess(1000, history(refunds_90d=3))
    assert (a.risk, a.signals) == (RiskLevel.HIGH, [Signal.FREQUENT_REFUNDS])


def test_any_chargeback_is_high() -> None:
    a = assess(1000, history(chargebacks=1))
    assert (a.risk, a.signals) == (RiskLevel.HIGH, [Signal.CHARGEBACKS])


def test_soft_signals_raise_the_score_but_stay_low() -> None:
    a = assess(1000, history(account_age_days=3, refunded_cents_90d=200_000))
    assert a.risk is RiskLevel.LOW
    assert a.signals == [Signal.NEW_ACCOUNT, Signal.HIGH_REFUND_VOLUME]
    assert a.score > assess(1000, history()).score


def test_output_fits_the_skill_schema() -> None:
    from jsonschema import Draft202012Validator

    from accord.contracts.agents import agent_contract

    schema = agent_contract("risk-check").skill("refund.risk").output_schema
    worst = assess(
        10**8, history(refunds_90d=9, chargebacks=4, account_age_days=0, refunded_cents_90d=10**7)
    )
    Draft202012Validator(schema).validate(worst.model_dump(mode="json"))
    assert worst.score == 1.0


@given(
    amount=st.integers(0, 10**8),
    refunds=st.integers(0, 20),
    chargebacks=st.integers(0, 5),
    extra_refunds=st.integers(0, 5),
    extra_amount=st.integers(0, 10**6),
)
def test_score_is_monotone(
    amount: int, refunds: int, chargebacks: int, extra_refunds: int, extra_amount: int
) -> None:
    base = assess(amount, history(refunds_90d=refunds, chargebacks=chargebacks))
    more = assess(
        amount + extra_amount, history(refunds_90d=refunds + extra_refunds, chargebacks=chargebacks)
    )
    assert 0 <= base.score <= more.score <= 1
    assert base.risk is RiskLevel.LOW or more.risk is RiskLevel.HIGH
