"""The payments server over HTTP: exactly-once refunds, tenancy and limits, on both backends."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest

from accord.contracts.errors import ErrorCode
from accord.tools.seed import ORDERS
from tests.support.processes import Service
from tests.tools.conftest import Backend, mcp_url
from tests.tools.helpers import ServiceClient, code_of, error_of, output_of


def refund(
    key: str,
    order_id: str = "O-1001",
    customer_id: str = "C-01",
    amount_cents: object = 100,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "idempotency_key": key,
        "order_id": order_id,
        "customer_id": customer_id,
        "amount_cents": amount_cents,
        "reason": "arrived broken",
        **extra,
    }


async def call_many(url: str, calls: list[dict[str, Any]]) -> list[types.CallToolResult]:
    """Fire the calls at once, each on its own client (own connection)."""

    async def one(arguments: dict[str, Any]) -> types.CallToolResult:
        async with ServiceClient(url) as client:
            return await client.call_tool("refunds.issue", arguments)

    return list(await asyncio.gather(*(one(a) for a in calls)))


async def test_issue_then_replay_then_get(payments: Service, backend: Backend, key: str) -> None:
    async with ServiceClient(mcp_url(payments)) as client:
        first = output_of(
            await client.call_tool(
                "refunds.issue", refund(key, amount_cents=1000, approved_by="ops-1")
            )
        )
        again = output_of(
            await client.call_tool(
                "refunds.issue", refund(key, amount_cents=1000, approved_by="ops-1")
            )
        )
        found = output_of(
            await client.call_tool("refunds.get", {"idempotency_key": key, "customer_id": "C-01"})
        )
        other_tenant = output_of(
            await client.call_tool("refunds.get", {"idempotency_key": key, "customer_id": "C-02"})
        )
        never = output_of(
            await client.call_tool(
                "refunds.get", {"idempotency_key": key + "-x", "customer_id": "C-01"}
            )
        )
    assert first["replayed"] is False
    assert again["replayed"] is True
    assert first["receipt"] == again["receipt"] == found["receipt"]
    receipt = first["receipt"]
    assert receipt["amount_cents"] == 1000
    assert receipt["order_id"] == "O-1001"
    assert receipt["approved_by"] == "ops-1"
    assert receipt["idempotency_key"] == key
    assert found["found"] is True
    assert other_tenant == {"found": False, "receipt": None}
    assert never == {"found": False, "receipt": None}
    assert await backend.ledger_rows(f"idempotency_key = '{key}'") == 1


async def test_same_key_other_arguments_is_a_conflict(
    payments: Service, backend: Backend, key: str
) -> None:
    async with ServiceClient(mcp_url(payments)) as client:
        output_of(await client.call_tool("refunds.issue", refund(key, amount_cents=200)))
        conflict = await client.call_tool("refunds.issue", refund(key, amount_cents=201))
        reason = await client.call_tool(
            "refunds.issue", {**refund(key, amount_cents=200), "reason": "other"}
        )
    assert code_of(conflict) is ErrorCode.IDEMPOTENCY_CONFLICT
    assert code_of(reason) is ErrorCode.IDEMPOTENCY_CONFLICT
    assert await backend.ledger_rows(f"idempotency_key = '{key}'") == 1


async def test_twenty_concurrent_calls_with_one_key_write_one_row(
    payments: Service, backend: Backend, key: str
) -> None:
    results = await call_many(mcp_url(payments), [refund(key, "O-1006", "C-04", 100)] * 20)
    outputs = [output_of(r) for r in results]
    assert len({o["receipt"]["receipt_id"] for o in outputs}) == 1
    assert sorted(o["replayed"] for o in outputs) == [False] + [True] * 19
    assert await backend.ledger_rows(f"idempotency_key = '{key}'") == 1


async def test_one_key_raced_across_two_orders_still_writes_one_row(
    payments: Service, backend: Backend, key: str
) -> None:
    # Different orders are not serialised with each other: only the UNIQUE constraint on the
    # key can decide this race. (O-1002, not O-1005: the over-refund test below may have left
    # O-1005 nothing to refund, and that answer is POLICY_DENIED, not a conflict.)
    calls = [refund(key, order, "C-01", 1) for order in ("O-1001", "O-1002") * 6]
    results = await call_many(mcp_url(payments), calls)
    assert await backend.ledger_rows(f"idempotency_key = '{key}'") == 1
    winners = {output_of(r)["receipt"]["order_id"] for r in results if not r.is_error}
    assert len(winners) == 1
    losers = [r for r, c in zip(results, calls, strict=True) if c["order_id"] not in winners]
    assert losers
    assert all(code_of(r) is ErrorCode.IDEMPOTENCY_CONFLICT for r in losers)


async def test_never_refunds_more_than_was_paid(
    payments: Service, backend: Backend, key: str
) -> None:
    # The server and its ledger are shared by the session: start from what O-1005 has left,
    # whoever refunded it before.
    total = next(o.total_cents for o in ORDERS if o.order_id == "O-1005")
    left = total - await backend.scalar(
        "payments",
        "SELECT coalesce(sum(amount_cents), 0) FROM payments_refunds WHERE order_id = 'O-1005'",
    )
    rows = await backend.ledger_rows("order_id = 'O-1005'")
    assert left > 1000, "the other tests must leave O-1005 most of its amount"
    async with ServiceClient(mcp_url(payments)) as client:
        output_of(
            await client.call_tool(
                "refunds.issue", refund(f"{key}:first", "O-1005", amount_cents=left - 500)
            )
        )
        denied = await client.call_tool(
            "refunds.issue", refund(f"{key}:second", "O-1005", amount_cents=501)
        )
        fits = await client.call_tool(
            "refunds.issue", refund(f"{key}:third", "O-1005", amount_cents=500)
        )
        already_refunded = await client.call_tool(
            "refunds.issue", refund(f"{key}:seeded", "O-2001", "C-04", 1)
        )
    error = error_of(denied)
    assert error.code is ErrorCode.POLICY_DENIED
    assert error.details == {"reason": "exceeds_refundable", "refundable_cents": 500}
    output_of(fits)
    assert code_of(already_refunded) is ErrorCode.POLICY_DENIED
    assert await backend.ledger_rows("order_id = 'O-1005'") == rows + 2


async def test_concurrent_refunds_with_different_keys_cannot_overspend(
    payments: Service, backend: Backend
) -> None:
    # O-1004 is 129900 cents: of ten concurrent 20000-cent refunds only six fit. Approved ones:
    # paid without an approver, only two would stay below the approval threshold (500.00;
    # tests/security/test_split_refunds.py).
    calls = [refund(f"race:{n}", "O-1004", "C-03", 20000, approved_by="ops-1") for n in range(10)]
    results = await call_many(mcp_url(payments), calls)
    paid = [r for r in results if not r.is_error]
    assert len(paid) == 6
    assert all(code_of(r) is ErrorCode.POLICY_DENIED for r in results if r.is_error)
    assert (
        await backend.scalar(
            "payments", "SELECT sum(amount_cents) FROM payments_refunds WHERE order_id = 'O-1004'"
        )
        == 120000
    )


BAD_INPUTS: list[tuple[str, dict[str, Any], ErrorCode]] = [
    (
        "missing key",
        {k: v for k, v in refund("x").items() if k != "idempotency_key"},
        ErrorCode.INVALID_INPUT,
    ),
    ("empty key", refund(""), ErrorCode.INVALID_INPUT),
    ("key with spaces", refund("a key"), ErrorCode.INVALID_INPUT),
    ("amount as string", refund("bad:1", amount_cents="100"), ErrorCode.INVALID_INPUT),
    ("amount as float", refund("bad:2", amount_cents=1.5), ErrorCode.INVALID_INPUT),
    ("amount as bool", refund("bad:3", amount_cents=True), ErrorCode.INVALID_INPUT),
    ("negative amount", refund("bad:4", amount_cents=-100), ErrorCode.INVALID_INPUT),
    ("zero amount", refund("bad:5", amount_cents=0), ErrorCode.INVALID_INPUT),
    ("huge amount", refund("bad:6", amount_cents=10**30), ErrorCode.INVALID_INPUT),
    ("oversized reason", refund("bad:7", reason="x" * 501), ErrorCode.INVALID_INPUT),
    ("oversized key", refund("k" * 129), ErrorCode.INVALID_INPUT),
    ("unknown field", refund("bad:8", note="hi"), ErrorCode.INVALID_INPUT),
    ("unknown order", refund("bad:9", "O-9999"), ErrorCode.NOT_FOUND),
    ("another customer's order", refund("bad:10", "O-1004", "C-01"), ErrorCode.NOT_FOUND),
]


@pytest.mark.parametrize(
    ("case", "arguments", "code"), BAD_INPUTS, ids=[c for c, _, _ in BAD_INPUTS]
)
async def test_bad_input_writes_nothing(
    payments: Service, backend: Backend, case: str, arguments: dict[str, Any], code: ErrorCode
) -> None:
    before = await backend.ledger_rows()
    async with ServiceClient(mcp_url(payments)) as client:
        result = await client.call_tool("refunds.issue", arguments)
    assert code_of(result) is code, case
    assert await backend.ledger_rows() == before
