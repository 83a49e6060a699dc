"""The refund policy rules, one test per rule plus the ordering between them."""

from __future__ import annotations

from typing import Any

import pytest

from accord.agents.policy_rules import (
    RETURN_WINDOW_DAYS,
    EvidenceNeeded,
    PolicyDecision,
    PolicyRequest,
    evaluate,
)
from accord.refund_contracts.domain import PolicyRule


def order(**overrides: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "order_id": "O-1001",
        "total_cents": 5999,
        "refunded_cents": 0,
        "refundable_cents": 5999,
        "final_sale": False,
        "days_since_delivery": 5,
        "status": "delivered",
    }
    facts.update(overrides)
    return facts


def decide(reason: str = "wrong_size", **kw: Any) -> PolicyDecision | EvidenceNeeded:
    facts = kw.pop("order", order())
    return evaluate(PolicyRequest.model_validate({"order": facts, "reason": reason, **kw}))


def decision(reason: str = "wrong_size", **kw: Any) -> PolicyDecision:
    out = decide(reason, **kw)
    assert isinstance(out, PolicyDecision)
    return out


def test_within_window_allows_the_refundable_rest() -> None:
    d = decision(order=order(refunded_cents=1000, refundable_cents=4999))
    assert (d.eligible, d.rule, d.max_refund_cents) == (True, PolicyRule.WITHIN_WINDOW, 4999)
    assert "5 days ago" in d.explanation
    assert "49.99" in d.explanation


@pytest.mark.parametrize("status", ["processing", "shipped", "canceled"])
def test_not_delivered_is_not_eligible(status: str) -> None:
    d = decision(order=order(status=status, days_since_delivery=None))
    assert (d.eligible, d.rule, d.max_refund_cents) == (False, PolicyRule.NOT_DELIVERED, 0)


def test_final_sale_is_not_eligible() -> None:
    d = decision(order=order(final_sale=True))
    assert (d.eligible, d.rule) == (False, PolicyRule.FINAL_SALE)


def test_day_30_is_inside_and_day_31_outside_the_window() -> None:
    inside = decision(order=order(days_since_delivery=RETURN_WINDOW_DAYS))
    outside = decision(order=order(days_since_delivery=RETURN_WINDOW_DAYS + 1))
    assert inside.rule is PolicyRule.WITHIN_WINDOW
    assert inside.eligible
    assert (outside.eligible, outside.rule, outside.max_refund_cents) == (
        False,
        PolicyRule.OUTSIDE_WINDOW,
        0,
    )


def test_fully_refunded_order_is_already_refunded() -> None:
    d = decision(order=order(refunded_cents=5999, refundable_cents=0))
    assert (d.eligible, d.rule) == (False, PolicyRule.ALREADY_REFUNDED)


def test_amount_above_refundable_is_capped_not_refused() -> None:
    d = decision(order=order(refunded_cents=2000, refundable_cents=3999), requested_cents=5999)
    assert (d.eligible, d.rule, d.max_refund_cents) == (
        True,
        PolicyRule.AMOUNT_EXCEEDS_REFUNDABLE,
        3999,
    )
    assert "59.99" in d.explanation
    assert "39.99" in d.explanation


def test_amount_within_refundable_is_within_window() -> None:
    d = decision(requested_cents=1000)
    assert (d.rule, d.max_refund_cents) == (PolicyRule.WITHIN_WINDOW, 5999)


@pytest.mark.parametrize("evidence", [None, "", "  ", "ok"])
def test_damage_without_evidence_asks_for_it(evidence: str | None) -> None:
    out = decide("damaged", evidence=evidence)
    assert isinstance(out, EvidenceNeeded)
    assert "photo" in out.question


def test_damage_with_evidence_is_eligible_even_for_final_sale() -> None:
    d = decision("damaged", order=order(final_sale=True), evidence="handle snapped, IMG-2291")
    assert (d.eligible, d.rule, d.max_refund_cents) == (True, PolicyRule.DAMAGE_WITH_EVIDENCE, 5999)


def test_damage_outside_the_window_is_refused_before_asking() -> None:
    d = decision("damaged", order=order(days_since_delivery=45))
    assert d.rule is PolicyRule.OUTSIDE_WINDOW


def test_facts_beat_reasons_not_delivered_first_then_already_refunded() -> None:
    facts = order(status="shipped", days_since_delivery=None, final_sale=True, refundable_cents=0)
    assert decision("damaged", order=facts).rule is PolicyRule.NOT_DELIVERED
    refunded = order(final_sale=True, refundable_cents=0, days_since_delivery=90)
    assert decision(order=refunded).rule is PolicyRule.ALREADY_REFUNDED


def test_final_sale_is_named_before_the_window() -> None:
    assert (
        decision(order=order(final_sale=True, days_since_delivery=90)).rule is PolicyRule.FINAL_SALE
    )


def test_every_rule_is_a_value_of_the_skill_output_enum() -> None:
    from accord.contracts.agents import agent_contract

    schema = agent_contract("policy-check").skill("refund.policy").output_schema
    assert set(schema["properties"]["rule"]["enum"]) == {r.value for r in PolicyRule}
