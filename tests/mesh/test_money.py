"""One record of money (issue 13), against the five services as real processes.

The payments ledger is the truth about refunds; commerce keeps no copy and reads it
(refunds.list) whenever it answers, so orders.lookup and customers.history agree with the
ledger as soon as a refund is issued, before the customer is told. On that view: a repeat
request for a fully refunded order is answered ``already_refunded`` with the original receipt
and its date; an amount the customer names is refunded when it fits what is left, and a later
request can refund the rest; an amount above it is refused with the maximum.
"""

from __future__ import annotations

import pytest

from accord.contracts.status import Status
from tests.mesh.mesh_support import Mesh, mesh_for_module
from tests.mesh.money_support import assert_views_agree, commerce_view, history, ledger_sums
from tests.mesh.support import ask

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(300)


async def test_seeded_history_is_the_ledgers(mesh_for_module: Mesh) -> None:
    """C-04's five refunds of the last 90 days (seed.py) are ledger rows, and commerce says so."""
    found = await history(mesh_for_module, "C-04")
    assert (found["refunds_90d"], found["refunded_cents_90d"]) == (
        5,
        4999 + 7500 + 3200 + 15000 + 2500,
    )
    paid = await commerce_view(mesh_for_module, "C-04", "O-2001")
    assert (paid["refunded_cents"], paid["refundable_cents"]) == (4999, 0)
    assert [r["receipt_id"] for r in paid["refunds"]] == ["R-SEED-2001"]


async def test_a_refund_reaches_commerce_and_a_repeat_is_already_refunded(
    mesh_for_module: Mesh,
) -> None:
    mesh = mesh_for_module
    before = (await history(mesh, "C-01"))["refunds_90d"]
    first = await ask(mesh, "C-01", "I changed my mind, please refund order O-1001")
    assert first.status is Status.COMPLETED, first.error
    receipt = (first.data or {})["receipt"]
    assert (first.data or {})["decision"] == "refunded"

    view = await commerce_view(mesh, "C-01", "O-1001")
    assert (view["refunded_cents"], view["refundable_cents"]) == (5999, 0)
    assert [r["receipt_id"] for r in view["refunds"]] == [receipt["receipt_id"]]
    assert (await history(mesh, "C-01"))["refunds_90d"] == before + 1

    again = await ask(mesh, "C-01", "I changed my mind, please refund order O-1001")
    data = again.data or {}
    assert again.status is Status.COMPLETED, again.error
    assert data["decision"] == "already_refunded"
    assert data["amount_cents"] == 0
    assert data["receipt"]["receipt_id"] == receipt["receipt_id"]  # the original, not a new one
    assert receipt["created_at"][:10] in data["explanation"]
    assert receipt["receipt_id"] in data["explanation"]
    assert ledger_sums(mesh)["O-1001"] == (1, 5999)  # paid once

    zh = await ask(mesh, "C-01", "不想要了，订单 O-1001 退款")
    assert (zh.data or {})["decision"] == "already_refunded"
    assert "已于" in (zh.data or {})["explanation"]


async def test_named_amounts_then_the_rest_then_too_much(mesh_for_module: Mesh) -> None:
    mesh = mesh_for_module
    ten = await ask(mesh, "C-01", "I changed my mind, refund $10 of order O-1005")
    assert (ten.data or {})["decision"] == "refunded", ten.error
    assert (ten.data or {})["receipt"]["amount_cents"] == 1000
    assert (await commerce_view(mesh, "C-01", "O-1005"))["refundable_cents"] == 2500

    # A separate request: another key, so the rest can still be refunded (half of 25.00).
    half = await ask(mesh, "C-01", "refund half of order O-1005, I changed my mind")
    data = half.data or {}
    assert data["decision"] == "refunded", half.error
    assert data["receipt"]["amount_cents"] == 1250
    assert data["receipt"]["idempotency_key"] != (ten.data or {})["receipt"]["idempotency_key"]
    assert any("$10.00" in r for r in data["reasons"])  # refunded before, said so

    too_much = await ask(mesh, "C-01", "退 30 块，订单 O-1005，不想要了")
    told = too_much.data or {}
    assert told["decision"] == "not_eligible", too_much.error
    assert told["amount_cents"] == 0
    assert "$12.50" in told["explanation"]  # the maximum
    assert ledger_sums(mesh)["O-1005"] == (2, 2250)  # nothing more was paid
    await assert_views_agree(mesh)
