"""Real commerce and payments processes for the tool security tests, and what they share.

One pair of servers per test module (module-scoped: a start costs seconds here); every test
uses orders, customers and idempotency keys that say what they are, and reads the payments
ledger directly to prove that a refused call wrote nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx2
import mcp_types as types
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import API_KEY_HEADER
from tests.support.processes import Service, run_service
from tests.support.tool_auth import bearer, secret_env

SERVICE_KEY: Final = "k-tool-security-service-key-0123456789"


@dataclass
class ToolServers:
    commerce: Service
    payments: Service
    data_dir: Path

    def mcp(self, name: str) -> str:
        return f"{getattr(self, name).url}/mcp"

    def ledger_rows(self, where: str = "1=1") -> int:
        with sqlite3.connect(self.data_dir / "payments.db") as conn:
            return int(
                conn.execute(f"SELECT count(*) FROM payments_refunds WHERE {where}").fetchone()[0]
            )


@contextmanager
def tool_servers(base: Path) -> Iterator[ToolServers]:
    data, logs = base / "data", base / "logs"
    data.mkdir()
    logs.mkdir()
    keys = base / "keys.yaml"
    keys.write_text(
        yaml.safe_dump(
            {
                SERVICE_KEY: {
                    "subject": "svc:batch",
                    "roles": ["service"],
                    "id": "batch-key",
                    "scopes": ["orders.lookup"],
                }
            }
        )
    )
    env = {"ACCORD_DATA_DIR": str(data), "ACCORD_API_KEYS": str(keys), **secret_env()}
    options = {"env": env, "log_dir": logs, "health_path": "/readyz", "deadline_s": 90.0}
    # Commerce reads refunds from payments (issue 13): payments first, commerce pointed at it.
    with run_service("payments", ["serve", "payments"], **options) as payments:
        ledger = {**env, "ACCORD_PAYMENTS_URL": payments.url}
        with run_service(
            "commerce", ["serve", "commerce"], **{**options, "env": ledger}
        ) as commerce:
            yield ToolServers(commerce, payments, data)


def client(url: str, token: str | None = None, api_key: str | None = None) -> Client:
    """The MCP SDK's own client, sending exactly the credential given (or none)."""
    headers = bearer(token) if token else {API_KEY_HEADER: api_key} if api_key else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


async def call(
    url: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    token: str | None = None,
    api_key: str | None = None,
    meta: dict[str, Any] | None = None,
) -> types.CallToolResult:
    async with client(url, token, api_key) as c:
        return await c.call_tool(tool, arguments, meta=meta)


def code(result: types.CallToolResult) -> ErrorCode | None:
    if not result.is_error:
        return None
    assert result.structured_content is None  # an error never carries data
    return AccordError.from_mcp_result(result.model_dump(by_alias=True, mode="json")).code
