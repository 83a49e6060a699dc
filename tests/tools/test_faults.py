"""Fault injection (ACCORD_FAULTS) and seeding across restarts, on real processes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from accord.contracts.errors import ErrorCode, RetryClass
from accord.protocol.dev.faults import parse_faults
from tests.support.tool_servers import run_commerce
from tests.tools.conftest import Backend, serve
from tests.tools.helpers import ServiceClient, code_of, error_of, output_of

LOOKUP = {"order_id": "O-1001", "customer_id": "C-01"}


def test_fault_grammar() -> None:
    plan = parse_faults("refunds.issue=RETRYABLE_TIMEOUT:2:after, orders.lookup=latency:150")
    assert plan["refunds.issue"].code is ErrorCode.RETRYABLE_TIMEOUT
    assert (plan["refunds.issue"].times, plan["refunds.issue"].after) == (2, True)
    assert plan["orders.lookup"].latency_ms == 150
    assert plan["orders.lookup"].code is None
    for bad in (
        "orders.lookup",
        "orders.lookup=NOPE:1",
        "orders.lookup=UNAVAILABLE:x",
        "orders.lookup=UNAVAILABLE:1:before",
    ):
        with pytest.raises(ValueError, match="bad fault rule"):
            parse_faults(bad)


async def test_injected_errors_then_latency(tmp_path: Path) -> None:
    backend = Backend("sqlite", tmp_path, None)
    faults = "orders.lookup=UNAVAILABLE:2,customers.history=latency:300"
    with run_commerce(
        backend.env(), tmp_path, commerce_env={"ACCORD_FAULTS": faults, "ACCORD_DEV": "1"}
    ) as (service, _payments):
        async with ServiceClient(f"{service.url}/mcp") as client:
            first = await client.call_tool("orders.lookup", LOOKUP)
            second = await client.call_tool("orders.lookup", LOOKUP)
            third = await client.call_tool("orders.lookup", LOOKUP)
            started = time.monotonic()
            output_of(await client.call_tool("customers.history", {"customer_id": "C-01"}))
            slow = time.monotonic() - started
    assert error_of(first).code is ErrorCode.UNAVAILABLE
    assert error_of(first).retry_class is RetryClass.RETRY
    assert code_of(second) is ErrorCode.UNAVAILABLE
    assert output_of(third)["order_id"] == "O-1001"
    assert slow >= 0.3


async def test_timeout_after_the_write_then_the_retry_replays(tmp_path: Path) -> None:
    # The reply is lost after the refund committed: the caller's retry with the same key must
    # get the original receipt, not a second refund.
    backend = Backend("sqlite", tmp_path, None)
    args = {
        "idempotency_key": "refund:O-1001",
        "order_id": "O-1001",
        "customer_id": "C-01",
        "amount_cents": 5999,
        "reason": "broken",
    }
    faults = "refunds.issue=RETRYABLE_TIMEOUT:1:after"
    for service in serve("payments", backend, tmp_path, ACCORD_FAULTS=faults, ACCORD_DEV="1"):
        async with ServiceClient(f"{service.url}/mcp") as client:
            lost = await client.call_tool("refunds.issue", args)
            asked = output_of(
                await client.call_tool(
                    "refunds.get", {"idempotency_key": "refund:O-1001", "customer_id": "C-01"}
                )
            )
            retried = output_of(await client.call_tool("refunds.issue", args))
    assert code_of(lost) is ErrorCode.RETRYABLE_TIMEOUT
    assert asked["found"] is True
    assert retried["replayed"] is True
    assert retried["receipt"] == asked["receipt"]
    assert await backend.ledger_rows() == 5 + 1  # the seeded history plus this one
