"""The orchestrator's completed refund carries a receipt a person can read (a text artifact
named ``receipt``, in the customer's language) next to the data artifact ``result`` that every
client reads; a decision without a payment carries none. Five real processes, own mesh (the
refunds here pay)."""

from __future__ import annotations

import pytest

from accord.contracts.keys import RECEIPT_ARTIFACT_NAME, RESULT_ARTIFACT_NAME
from accord.contracts.status import Status
from tests.mesh.mesh_support import Mesh, mesh_for_module
from tests.mesh.support import ask, customer

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(300)


async def test_a_paid_refund_carries_a_receipt_in_english(mesh_for_module: Mesh) -> None:
    done = await ask(mesh_for_module, "C-01", "I changed my mind, refund $10 of order O-1005")
    assert done.status is Status.COMPLETED, done.error
    paid = (done.data or {})["receipt"]
    # Read back as any later reader does (GetTask), not only from the stream.
    async with await customer(mesh_for_module, "C-01") as client:
        view = await client.get(done.task_id)
    names = [a.get("name") for a in view.artifacts]
    assert names == [RESULT_ARTIFACT_NAME, RECEIPT_ARTIFACT_NAME]
    assert view.data == done.data  # the data artifact is what it always was
    receipt = view.artifact_text(RECEIPT_ARTIFACT_NAME)
    assert receipt is not None
    assert receipt.startswith(f"Refund receipt {paid['receipt_id']}")
    assert "Order: O-1005" in receipt
    assert "Amount refunded: $10.00" in receipt
    assert paid["created_at"][:10] in receipt


async def test_the_receipt_is_in_the_customers_language(mesh_for_module: Mesh) -> None:
    done = await ask(mesh_for_module, "C-01", "鞋码不合适，想退款，订单 O-1001")
    assert done.status is Status.COMPLETED, done.error
    assert (done.data or {})["decision"] == "refunded"
    async with await customer(mesh_for_module, "C-01") as client:
        view = await client.get(done.task_id)
    receipt = view.artifact_text(RECEIPT_ARTIFACT_NAME)
    assert receipt is not None
    assert receipt.startswith("退款凭证 ")
    assert "订单：O-1001" in receipt


async def test_no_payment_no_receipt(mesh_for_module: Mesh) -> None:
    done = await ask(mesh_for_module, "C-01", "I want a refund for order O-1002, wrong size")
    assert done.status is Status.COMPLETED, done.error
    assert (done.data or {})["decision"] != "refunded"
    async with await customer(mesh_for_module, "C-01") as client:
        view = await client.get(done.task_id)
    assert view.artifact_text(RECEIPT_ARTIFACT_NAME) is None
