"""Issue 12, "Tool servers accept anyone": every MCP request over HTTP needs a verified
principal (the MCP authorization spec for HTTP transports), against real `accord serve`
processes.

Before: with no credential at all, refunds.issue on payments paid 45.00 USD for O-1003 (a
final-sale order) with approved_by "approver-1" forged, and orders.lookup / customers.history
answered for any customer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import PROTECTED_RESOURCE_PATH
from tests.security.tool_servers import SERVICE_KEY, ToolServers, call, code, tool_servers
from tests.support.tool_auth import SECRET, delegation_meta, service_token, token_for

MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    },
}
FORGED_REFUND = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {
        "name": "refunds.issue",
        "arguments": {
            "idempotency_key": "refund:O-1003",
            "order_id": "O-1003",
            "customer_id": "C-02",
            "amount_cents": 4500,
            "reason": "forged",
            "approved_by": "approver-1",
        },
    },
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolServers]:
    with tool_servers(tmp_path_factory.mktemp("tool-auth")) as found:
        yield found


def _challenge(response: httpx.Response) -> str:
    assert response.status_code == 401, response.text
    assert AccordError.from_http(401, response.json()).code is ErrorCode.UNAUTHENTICATED
    return response.headers["www-authenticate"]


@pytest.mark.parametrize("name", ["commerce", "payments"])
def test_no_credential_is_401_naming_the_resource_metadata(servers: ToolServers, name: str) -> None:
    base = getattr(servers, name).url
    for body in (INITIALIZE, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}):
        challenge = _challenge(httpx.post(f"{base}/mcp", json=body, headers=MCP_HEADERS))
        where = f"{base}{PROTECTED_RESOURCE_PATH}/mcp"
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{where}"' in challenge
        assert "invalid_token" not in challenge  # nothing was presented (RFC 6750 3.1)


@pytest.mark.parametrize("name", ["commerce", "payments"])
def test_the_metadata_document_is_served_publicly(servers: ToolServers, name: str) -> None:
    base = getattr(servers, name).url
    for path in (f"{PROTECTED_RESOURCE_PATH}/mcp", PROTECTED_RESOURCE_PATH):
        document = httpx.get(base + path)
        assert document.status_code == 200
        body = document.json()
        assert body["resource"] == f"{base}/mcp"
        assert body["authorization_servers"]  # RFC 9728: where tokens come from
        assert body["bearer_methods_supported"] == ["header"]
    expected = {
        "commerce": ["customers.history", "orders.customer_history", "orders.lookup"],
        "payments": ["refunds.get", "refunds.issue", "refunds.list"],
    }
    assert body["scopes_supported"] == expected[name]  # the grants its tools' contracts name
    assert httpx.get(f"{base}/healthz").status_code == 200
    assert httpx.get(f"{base}/readyz").status_code == 200


def test_a_forged_refund_without_credential_pays_nothing(servers: ToolServers) -> None:
    """The issue's reproduction, byte for byte: no credential, approved_by forged."""
    before = servers.ledger_rows("order_id = 'O-1003'")
    response = httpx.post(servers.mcp("payments"), json=FORGED_REFUND, headers=MCP_HEADERS)
    _challenge(response)
    assert servers.ledger_rows("order_id = 'O-1003'") == before == 0


def test_reads_without_credential_answer_nothing(servers: ToolServers) -> None:
    for tool, arguments in (
        ("orders.lookup", {"order_id": "O-1003", "customer_id": "C-02"}),
        ("customers.history", {"customer_id": "C-04"}),
    ):
        body = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        response = httpx.post(servers.mcp("commerce"), json=body, headers=MCP_HEADERS)
        _challenge(response)
        assert "total_cents" not in response.text
        assert "refunds_90d" not in response.text


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer not-a-jwt",
        f"Bearer {token_for('C-01', ['customer']).rsplit('.', 1)[0]}.AAAA",  # bad signature
        "Basic dXNlcjpwYXNz",
    ],
)
def test_a_bad_credential_is_401_invalid_token(servers: ToolServers, authorization: str) -> None:
    headers = {**MCP_HEADERS, "authorization": authorization}
    challenge = _challenge(httpx.post(servers.mcp("payments"), json=INITIALIZE, headers=headers))
    assert 'error="invalid_token"' in challenge
    assert "resource_metadata=" in challenge


def test_an_unknown_api_key_is_refused(servers: ToolServers) -> None:
    headers = {**MCP_HEADERS, "x-api-key": "k-nobody-knows-this-one"}
    challenge = _challenge(httpx.post(servers.mcp("commerce"), json=INITIALIZE, headers=headers))
    assert 'error="invalid_token"' in challenge


async def test_an_api_key_is_a_verified_principal(servers: ToolServers) -> None:
    """X-API-Key goes through the same Authenticator; the key's grants are its scopes."""
    looked = await call(
        servers.mcp("commerce"),
        "orders.lookup",
        {"order_id": "O-1001", "customer_id": "C-01"},
        api_key=SERVICE_KEY,
        meta=delegation_meta("C-01"),
    )
    assert code(looked) is None, looked
    history = await call(
        servers.mcp("commerce"),
        "customers.history",  # not among the key's scopes
        {"customer_id": "C-01"},
        api_key=SERVICE_KEY,
        meta=delegation_meta("C-01"),
    )
    assert code(history) is ErrorCode.PERMISSION_DENIED


async def test_a_verified_service_is_served(servers: ToolServers) -> None:
    result = await call(
        servers.mcp("commerce"),
        "orders.lookup",
        {"order_id": "O-1001", "customer_id": "C-01"},
        token=service_token(["orders.lookup"]),
        meta=delegation_meta("C-01"),
    )
    assert code(result) is None
    assert (result.structured_content or {})["order_id"] == "O-1001"


def test_tools_check_sends_the_users_credential(servers: ToolServers) -> None:
    """`accord tools check` lists the tools with --token; a wrong one is refused (exit 2)."""
    env = {**os.environ, "ACCORD_JWT_SECRET": SECRET}
    cli = [
        sys.executable,
        "-m",
        "accord.cli.main",
        "tools",
        "check",
        servers.mcp("payments"),
    ]
    good = subprocess.run(
        [*cli, "--token", token_for("C-01", ["customer"])],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert good.returncode == 0, good.stdout + good.stderr
    assert "refunds.issue" in good.stdout
    bad = subprocess.run(
        [*cli, "--token", "not-a-token"], env=env, capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "UNAUTHENTICATED" in bad.stdout
