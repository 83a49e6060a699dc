"""The commerce server over HTTP: orders.lookup, customers.history and orders.customer_history,
on both backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import mcp_types as types
import pytest

from accord.contracts.errors import ErrorCode
from tests.support.processes import Service
from tests.tools.conftest import Backend, mcp_url
from tests.tools.helpers import ServiceClient, code_of, error_of, output_of


async def test_lookup_reports_the_order_in_integer_cents(
    commerce: Service, backend: Backend
) -> None:
    async with ServiceClient(mcp_url(commerce)) as client:
        result = await client.call_tool(
            "orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"}
        )
    order = output_of(result)
    assert order["order_id"] == "O-1001"
    assert order["customer_id"] == "C-01"
    assert order["total_cents"] == 5999
    assert order["currency"] == "USD"
    # What the payments ledger holds for it (shared with the payments tests of this session).
    paid = await backend.scalar(
        "payments",
        "SELECT coalesce(sum(amount_cents), 0) FROM payments_refunds WHERE order_id = 'O-1001'",
    )
    assert order["refunded_cents"] == paid
    assert order["refundable_cents"] == 5999 - paid
    assert order["days_since_delivery"] == 5
    assert order["status"] == "delivered"
    assert order["final_sale"] is False
    assert [i["sku"] for i in order["items"]] == ["EAR-100"]
    delivered = datetime.fromisoformat(order["delivered_at"].replace("Z", "+00:00"))
    assert (datetime.now(UTC) - delivered).days == 5
    # The text block carries the same JSON for clients that only read text.
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert json.loads(block.text) == order


@pytest.mark.parametrize(
    ("order_id", "customer_id", "check"),
    [
        ("O-1002", "C-01", lambda o: o["days_since_delivery"] == 60),
        ("O-1003", "C-02", lambda o: o["final_sale"] is True and o["items"][0]["final_sale"]),
        ("O-1004", "C-03", lambda o: o["total_cents"] == 129900),
        ("O-1005", "C-01", lambda o: o["items"][0]["name"] == "Ceramic mug"),
        ("O-1006", "C-04", lambda o: o["total_cents"] == 12000),
        ("O-2001", "C-04", lambda o: o["refundable_cents"] == 0 and o["refunded_cents"] == 4999),
    ],
)
async def test_seeded_demo_cases(
    commerce: Service, order_id: str, customer_id: str, check: object
) -> None:
    async with ServiceClient(mcp_url(commerce)) as client:
        order = output_of(
            await client.call_tool(
                "orders.lookup", {"order_id": order_id, "customer_id": customer_id}
            )
        )
    assert callable(check)
    assert check(order)


async def test_another_customers_order_is_not_found(commerce: Service) -> None:
    async with ServiceClient(mcp_url(commerce)) as client:
        theirs = await client.call_tool(
            "orders.lookup", {"order_id": "O-1004", "customer_id": "C-01"}
        )
        missing = await client.call_tool(
            "orders.lookup", {"order_id": "O-9999", "customer_id": "C-01"}
        )
    # Indistinguishable from an order that does not exist: no data leaks.
    assert code_of(theirs) is ErrorCode.NOT_FOUND
    assert code_of(missing) is ErrorCode.NOT_FOUND
    assert "O-1004" not in str(error_of(theirs).details)


async def test_history_shows_frequent_refunders(commerce: Service, backend: Backend) -> None:
    async with ServiceClient(mcp_url(commerce)) as client:
        c04 = output_of(await client.call_tool("customers.history", {"customer_id": "C-04"}))
        c01 = output_of(await client.call_tool("customers.history", {"customer_id": "C-01"}))
        unknown = await client.call_tool("customers.history", {"customer_id": "C-99"})
    # The seeded five of C-04 (77 to 12 days old) and whatever this session's payments tests
    # paid since: all within 90 days, all in the ledger commerce reads.
    c04_rows = await backend.ledger_rows("customer_id = 'C-04'")
    c04_paid = await backend.scalar(
        "payments", "SELECT sum(amount_cents) FROM payments_refunds WHERE customer_id = 'C-04'"
    )
    assert c04["refunds_90d"] == c04_rows >= 5
    assert c04["refunded_cents_90d"] == c04_paid >= 33199
    assert c04["orders_total"] == 6
    assert c01["refunds_90d"] == await backend.ledger_rows("customer_id = 'C-01'")
    assert c01["orders_total"] == 3
    assert c01["orders_90d"] == 3
    assert c01["account_age_days"] == 420
    assert code_of(unknown) is ErrorCode.NOT_FOUND


async def test_the_history_of_an_orders_customer_is_given_only_for_their_own_order(
    commerce: Service,
) -> None:
    """orders.customer_history: customers.history's answer and the order's id, in one call;
    another customer's order (or none) is NOT_FOUND, as orders.lookup answers it."""
    async with ServiceClient(mcp_url(commerce)) as client:
        history = output_of(await client.call_tool("customers.history", {"customer_id": "C-04"}))
        of_order = output_of(
            await client.call_tool(
                "orders.customer_history", {"order_id": "O-1006", "customer_id": "C-04"}
            )
        )
        theirs = await client.call_tool(
            "orders.customer_history", {"order_id": "O-1001", "customer_id": "C-04"}
        )
        missing = await client.call_tool(
            "orders.customer_history", {"order_id": "O-9999", "customer_id": "C-04"}
        )
        bad = await client.call_tool(
            "orders.customer_history", {"order_id": "1006", "customer_id": "C-04"}
        )
    assert of_order == {"order_id": "O-1006", **history}
    assert code_of(theirs) is ErrorCode.NOT_FOUND
    assert code_of(missing) is ErrorCode.NOT_FOUND
    assert error_of(theirs).message == error_of(missing).message.replace("O-9999", "O-1001")
    assert code_of(bad) is ErrorCode.INVALID_INPUT


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"order_id": "O-1001"},
        {"order_id": 1001, "customer_id": "C-01"},
        {"order_id": "1001", "customer_id": "C-01"},
        {"order_id": "O-1001", "customer_id": "C-01", "extra": True},
        {"order_id": "O-" + "1" * 5000, "customer_id": "C-01"},
        {"order_id": "O-1001", "customer_id": None},
    ],
)
async def test_bad_input_is_invalid_input_without_echo(
    commerce: Service, arguments: dict[str, object]
) -> None:
    async with ServiceClient(mcp_url(commerce)) as client:
        result = await client.call_tool("orders.lookup", arguments)
    error = error_of(result)
    assert error.code is ErrorCode.INVALID_INPUT
    assert error.details["problems"], "the offending fields are named"
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert "11111" not in block.text  # values are never echoed back
