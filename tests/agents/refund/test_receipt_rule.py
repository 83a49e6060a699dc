"""The receipt rule: a receipt under a refund's key is that refund, field by field."""

from __future__ import annotations

from typing import Any

import pytest

from accord.agents.refund.outputs import Receipt, receipt_mismatches

DECIDED: dict[str, Any] = {
    "idempotency_key": "refund:O-1005",
    "order_id": "O-1005",
    "customer_id": "C-01",
    "amount_cents": 3500,
    "currency": "USD",
}


def _receipt(**changed: Any) -> Receipt:
    values = {
        **DECIDED,
        "receipt_id": "R-1",
        "reason": "changed_mind",
        "approved_by": None,
        "created_at": "2026-12-01T09:00:00Z",
        **changed,
    }
    return Receipt.model_validate(values)


def test_the_refund_decided_matches_whatever_its_reason_or_approver() -> None:
    assert receipt_mismatches(_receipt(reason="x", approved_by="approver-1"), **DECIDED) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("amount_cents", 1),
        ("currency", "EUR"),
        ("order_id", "O-1001"),
        ("customer_id", "C-02"),
        ("idempotency_key", "refund:O-1001"),
    ],
)
def test_any_other_amount_order_customer_or_key_is_a_mismatch(field: str, value: Any) -> None:
    assert receipt_mismatches(_receipt(**{field: value}), **DECIDED) == [field]


def test_an_unknown_currency_is_not_compared() -> None:
    assert receipt_mismatches(_receipt(currency="EUR"), **{**DECIDED, "currency": None}) == []
