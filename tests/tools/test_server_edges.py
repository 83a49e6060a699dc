"""HTTP edges of a tool server: health, readiness, body limit, Host check, unknown tools."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import TRACEPARENT_KEY
from tests.support.processes import Service
from tests.support.tool_auth import bearer, customer_token
from tests.tools.conftest import mcp_url
from tests.tools.helpers import ServiceClient

HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
    **bearer(customer_token("C-02")),
}


def test_health_and_readiness(commerce: Service) -> None:
    assert httpx.get(f"{commerce.url}/healthz").json()["status"] == "ok"
    ready = httpx.get(f"{commerce.url}/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"


def test_oversized_body_is_a_contract_413(commerce: Service) -> None:
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"orders.lookup",'
        b'"arguments":{"order_id":"' + b"1" * (2 * 1024 * 1024) + b'"}}}'
    )
    response = httpx.post(mcp_url(commerce), content=body, headers=HEADERS)
    assert response.status_code == 413
    assert AccordError.from_http(413, response.json()).code is ErrorCode.PAYLOAD_TOO_LARGE


def test_foreign_host_header_is_refused(commerce: Service) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx.post(
        mcp_url(commerce), json=body, headers={**HEADERS, "host": "evil.example:80"}
    )
    assert response.status_code == 421


async def test_unknown_tool_is_a_protocol_error(commerce: Service) -> None:
    async with ServiceClient(mcp_url(commerce)) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("orders.delete", {})
    assert caught.value.error.code == -32602


def test_raw_json_rpc_call_carries_the_error_in_meta(commerce: Service) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "orders.lookup",
            "_meta": {TRACEPARENT_KEY: "00-" + "a" * 32 + "-" + "b" * 16 + "-01"},
            "arguments": {"order_id": "O-1004", "customer_id": "C-02"},
        },
    }
    result = httpx.post(mcp_url(commerce), json=body, headers=HEADERS).json()["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert AccordError.from_mcp_result(result).code is ErrorCode.NOT_FOUND
