"""Commerce's refund figures are the payments ledger's (issue 13), on both backends.

Real processes: a refund issued on payments shows in commerce's orders.lookup and
customers.history at once (commerce keeps no copy; it reads refunds.list), and the seeded
history (C-04's five refunds) comes from the ledger.
"""

from __future__ import annotations

from accord.contracts.errors import ErrorCode
from tests.support.processes import Service
from tests.tools.conftest import Backend, mcp_url
from tests.tools.helpers import ServiceClient, code_of, output_of
from tests.tools.test_payments import refund


async def _lookup(commerce: Service, order_id: str, customer_id: str) -> dict[str, object]:
    async with ServiceClient(mcp_url(commerce)) as client:
        args = {"order_id": order_id, "customer_id": customer_id}
        return output_of(await client.call_tool("orders.lookup", args))


async def test_a_refund_on_payments_shows_in_commerce_at_once(
    commerce: Service, payments: Service, backend: Backend, key: str
) -> None:
    before = await _lookup(commerce, "O-1003", "C-02")
    async with ServiceClient(mcp_url(commerce)) as client:
        history = output_of(await client.call_tool("customers.history", {"customer_id": "C-02"}))
    async with ServiceClient(mcp_url(payments)) as client:
        issued = output_of(
            await client.call_tool("refunds.issue", refund(key, "O-1003", "C-02", 7))
        )
    after = await _lookup(commerce, "O-1003", "C-02")
    assert after["refunded_cents"] == before["refunded_cents"] + 7  # type: ignore[operator]
    assert after["refundable_cents"] == before["refundable_cents"] - 7  # type: ignore[operator]
    refunds = after["refunds"]
    assert isinstance(refunds, list)
    assert issued["receipt"]["receipt_id"] in [r["receipt_id"] for r in refunds]
    ledger = await backend.scalar(
        "payments",
        "SELECT coalesce(sum(amount_cents), 0) FROM payments_refunds WHERE order_id = 'O-1003'",
    )
    assert after["refunded_cents"] == ledger
    async with ServiceClient(mcp_url(commerce)) as client:
        now = output_of(await client.call_tool("customers.history", {"customer_id": "C-02"}))
    assert now["refunds_90d"] == history["refunds_90d"] + 1


async def test_the_seeded_history_is_the_ledgers(commerce: Service, payments: Service) -> None:
    async with ServiceClient(mcp_url(payments)) as client:
        listed = output_of(
            await client.call_tool("refunds.list", {"customer_id": "C-04", "order_id": "O-2004"})
        )
    assert (listed["count"], listed["total_cents"]) == (1, 15000)
    assert listed["refunds"][0]["receipt_id"] == "R-SEED-2004"
    paid = await _lookup(commerce, "O-2004", "C-04")
    assert (paid["refunded_cents"], paid["refundable_cents"]) == (15000, 0)


async def test_commerce_keeps_no_refunds_table(commerce: Service, backend: Backend) -> None:
    """Migration 0002 dropped the copy: there is one record of refunds, the ledger."""
    if backend.database_url is None:
        sql = "SELECT count(*) FROM sqlite_master WHERE name = 'commerce_refunds'"
    else:
        sql = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'commerce_refunds'"
    assert await backend.scalar("commerce", sql) == 0


async def test_refunds_list_is_for_the_delegated_customer_only(payments: Service) -> None:
    async with ServiceClient(mcp_url(payments)) as client:
        mine = output_of(await client.call_tool("refunds.list", {"customer_id": "C-02"}))
        bad = await client.call_tool("refunds.list", {"customer_id": "C-02", "since_days": 0})
    assert all(r["customer_id"] == "C-02" for r in mine["refunds"])
    assert code_of(bad) is ErrorCode.INVALID_INPUT
