"""The same servers over stdio, launched by the MCP SDK's stdio client."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from accord.contracts.errors import ErrorCode
from tests.support.processes import Service
from tests.support.tool_auth import secret_env
from tests.tools.conftest import Backend
from tests.tools.helpers import code_of, output_of


def stdio(
    service: str, data_dir: Path, database_url: str | None, **env: str
) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "accord.cli.main", "serve", service, "--stdio"],
        env={
            "ACCORD_DATA_DIR": str(data_dir),
            "ACCORD_DATABASE_URL": database_url or "",
            "ACCORD_FAULTS": "",
            "PATH": "/usr/bin:/bin",
            **env,
        },
    )


async def test_commerce_and_payments_over_stdio(
    backend: Backend, tmp_path: Path, payments: Service
) -> None:
    data = tmp_path if backend.database_url is None else backend.data_dir
    # Commerce reads refunds from the payments ledger (over HTTP, with its own service token).
    ledger = {"ACCORD_PAYMENTS_URL": payments.url, **secret_env()}
    async with Client(stdio("commerce", data, backend.database_url, **ledger)) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        order = output_of(
            await client.call_tool("orders.lookup", {"order_id": "O-1003", "customer_id": "C-02"})
        )
        theirs = await client.call_tool(
            "orders.lookup", {"order_id": "O-1003", "customer_id": "C-01"}
        )
    assert names == ["orders.lookup", "customers.history", "orders.customer_history"]
    assert order["final_sale"] is True
    assert code_of(theirs) is ErrorCode.NOT_FOUND

    key = f"stdio:{backend.name}"
    args = {
        "idempotency_key": key,
        "order_id": "O-1003",
        "customer_id": "C-02",
        "amount_cents": 10,
        "reason": "stdio",
    }
    async with Client(stdio("payments", data, backend.database_url)) as client:
        first = output_of(await client.call_tool("refunds.issue", args))
        again = output_of(await client.call_tool("refunds.issue", args))
        missing_key = await client.call_tool(
            "refunds.issue", {k: v for k, v in args.items() if k != "idempotency_key"}
        )
    assert (first["replayed"], again["replayed"]) == (False, True)
    assert code_of(missing_key) is ErrorCode.INVALID_INPUT
