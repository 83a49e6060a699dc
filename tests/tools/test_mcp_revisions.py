"""The tool servers speak each MCP revision the mcp SDK's own client can pin, on one endpoint:
2026-07-28 (stateless: no initialize, version and capabilities in each request) and the
handshake era (2025-11-25). Real commerce and payments processes; the SDK's client, not ours."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import LATEST_MODERN_VERSION

from accord.contracts.envelope import Tenant
from accord.contracts.errors import ErrorCode
from accord.contracts.keys import MCP_ERROR_META_KEY, TOOL_DELEGATION_META_KEY
from accord.contracts.tool_access import ToolDelegation
from tests.mesh.support import SECRET
from tests.support.processes import Service
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_servers import run_commerce

MODES = (LATEST_MODERN_VERSION, "legacy")
FOR_C01 = {
    TOOL_DELEGATION_META_KEY: ToolDelegation(
        tenant=Tenant(app="accord", user="C-01", session="revisions")
    ).model_dump(mode="json", exclude_none=True)
}


@pytest.fixture(scope="module")
def commerce(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("mcp-revisions")
    env = {"ACCORD_DATA_DIR": str(root / "data"), "ACCORD_JWT_SECRET": SECRET}
    with run_commerce(env, root) as (server, _payments):
        yield server


@asynccontextmanager
async def _client(url: str, mode: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30.0) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def _token() -> str:
    return sign_as(TEST_SERVICE, scopes=("orders.lookup",))


_MODERN_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": LATEST_MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _modern_headers(method: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {_token()}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LATEST_MODERN_VERSION,
        "Mcp-Method": method,
    }


@pytest.mark.parametrize("mode", MODES)
async def test_each_revision_lists_calls_and_answers_contract_errors(
    commerce: Service, mode: str
) -> None:
    async with _client(commerce.url + "/mcp", mode, _token()) as client:
        assert client.protocol_version == (mode if mode != "legacy" else "2025-11-25")
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert "orders.lookup" in listed
        ok = await client.call_tool(
            "orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"}, meta=FOR_C01
        )
        assert ok.is_error is False
        structured: dict[str, Any] = ok.structured_content or {}
        assert structured["order_id"] == "O-1001"
        assert structured["total_cents"] == 5999
        # C-02's order, asked for C-01: the contract's code in _meta, never structuredContent.
        foreign = await client.call_tool(
            "orders.lookup", {"order_id": "O-1003", "customer_id": "C-01"}, meta=FOR_C01
        )
        assert foreign.is_error is True
        assert foreign.structured_content is None
        meta = foreign.meta or {}
        assert meta[MCP_ERROR_META_KEY]["code"] == ErrorCode.NOT_FOUND.value


@pytest.mark.parametrize("method", ["initialize", "server/discover", "tools/list"])
def test_each_revision_is_refused_without_a_credential(commerce: Service, method: str) -> None:
    # initialize opens the handshake era; server/discover and a versioned tools/list are
    # 2026-07-28's first requests. None gets past the gate without a credential.
    version = "2025-11-25" if method == "initialize" else LATEST_MODERN_VERSION
    params: dict[str, Any] = {"_meta": {"io.modelcontextprotocol/protocolVersion": version}}
    if method == "initialize":
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
    answer = httpx2.post(
        commerce.url + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": version,
            "Mcp-Method": method,
        },
        timeout=30.0,
    )
    assert answer.status_code == 401, answer.text
    assert answer.json()["error"]["code"] == ErrorCode.UNAUTHENTICATED.value


def test_a_modern_request_is_one_self_contained_post(commerce: Service) -> None:
    # No initialize, no session id: the version, the method and the tool name travel with
    # the request, in `_meta` and in the headers the revision names.
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "orders.lookup",
            "arguments": {"order_id": "O-1001", "customer_id": "C-01"},
            "_meta": {
                **FOR_C01,
                "io.modelcontextprotocol/protocolVersion": LATEST_MODERN_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Authorization": f"Bearer {_token()}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LATEST_MODERN_VERSION,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "orders.lookup",
    }
    answer = httpx2.post(commerce.url + "/mcp", json=body, headers=headers, timeout=30.0)
    assert answer.status_code == 200, answer.text
    assert "mcp-session-id" not in answer.headers
    result = answer.json()["result"]
    assert result["structuredContent"]["order_id"] == "O-1001"
    # The header must name the method the body does (the revision's rule, -32020 / 400).
    mismatched = httpx2.post(
        commerce.url + "/mcp",
        json=body,
        headers={**headers, "Mcp-Name": "refunds.issue"},
        timeout=30.0,
    )
    assert mismatched.status_code == 400, mismatched.text
    assert mismatched.json()["error"]["code"] == -32020  # HeaderMismatch


def test_a_modern_answer_is_json_with_its_result_type(commerce: Service) -> None:
    # Every result says its resultType; an Mcp-Name in the Base64 sentinel form is decoded
    # before it is compared with the body (the form a client uses for a name unsafe in a header).
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "orders.lookup",
            "arguments": {"order_id": "O-1001", "customer_id": "C-01"},
            "_meta": {**FOR_C01, **_MODERN_META},
        },
    }
    encoded = base64.b64encode(b"orders.lookup").decode()
    answer = httpx2.post(
        commerce.url + "/mcp",
        json=body,
        headers={**_modern_headers("tools/call"), "Mcp-Name": f"=?base64?{encoded}?="},
        timeout=30.0,
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["id"] == 2
    assert answer.json()["result"]["resultType"] == "complete"


def test_a_foreign_origin_is_forbidden(commerce: Service) -> None:
    # DNS rebinding: a browser page of another origin reaching the loopback server is refused
    # with 403 even when the Host header is the server's own.
    params = {"_meta": _MODERN_META}
    body = {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": params}
    headers = _modern_headers("server/discover")
    answer = httpx2.post(
        commerce.url + "/mcp",
        json=body,
        headers={**headers, "Origin": "http://evil.example"},
        timeout=30.0,
    )
    assert answer.status_code == 403, answer.text
    own = httpx2.post(
        commerce.url + "/mcp", json=body, headers={**headers, "Origin": commerce.url}, timeout=30.0
    )
    assert own.status_code == 200, own.text


def test_an_accepted_notification_is_202_with_no_body(commerce: Service) -> None:
    answer = httpx2.post(
        commerce.url + "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={
            "Authorization": f"Bearer {_token()}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        timeout=30.0,
    )
    assert answer.status_code == 202, answer.text
    assert answer.content == b""
