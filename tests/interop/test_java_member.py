"""The Java commerce server (tools/java/commerce) is a member of the mesh.

Three ways, all against real processes (the jar is built once per module, `mvn package` of
tools/java, as `make java-member` builds it):

- the contract test kit, run by the member's own script (scripts/kit.sh, what `make java-member`
  runs), finds no violation: its JUnit report has no failure and only the skips listed below;
- it answers every seeded order and customer as the Python commerce does, both reading one
  payments ledger, and refuses the same calls with the same codes;
- a refund through the orchestrator, with the Java server in the Python one's place
  (ACCORD_COMMERCE_URL: policy-check, risk-check and the orchestrator all call it), ends
  refunded, and the Java server then reports the refund the ledger holds.

Skipped, saying why, only when java or mvn is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from mcp import Client, types
from tests.interop.member_kit import run_member_kit
from tests.mesh import interop_matrix
from tests.mesh.mesh_support import MCP_HEADERS, ROOT, declared_at, python_version
from tests.mesh.money_support import ledger_sums
from tests.mesh.support import Mesh, ask, running_mesh, token
from tests.support.maven import maven_package
from tests.support.processes import free_port, wait_healthy
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import transport
from tests.tools.helpers import ServiceClient

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.service_keys import ensure_ring, keys_dir
from accord.tools import seed

pytestmark = pytest.mark.timeout(600)

MEMBERS: Final = ROOT / "tools" / "java"
MEMBER: Final = MEMBERS / "commerce"
TOOLS: Final = ("orders.lookup", "customers.history", "orders.customer_history")

# The checks the kit skips for this member, each for a reason of its scope (README.md): it
# serves read-only tools, so the write-tool checks have nothing to run against.
EXPECTED_SKIPS: Final = {
    "TOOL-007 a write tool refuses a call without its idempotency key",
    "TOOL-006 the same key twice has one effect and replays the receipt",
    "TOOL-006 the same key with other arguments is IDEMPOTENCY_CONFLICT",
    "TOOL-011 a write tool refuses a principal its contract does not allow",
}


@pytest.fixture(scope="module")
def jar() -> Path:
    """commerce-java.jar, built once for the module (the first build downloads from Maven
    Central into ~/.m2)."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: the Java member cannot be built")
    done = maven_package(MEMBERS, timeout_s=540)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    built = MEMBER / "target" / "commerce-java.jar"
    assert built.is_file()
    return built


def test_kit_finds_no_violation_in_the_java_commerce(jar: Path, tmp_path: Path) -> None:
    junit = tmp_path / "kit.xml"
    env = {
        **os.environ,
        "BIN": str(Path(sys.executable).parent),
        "JAR": str(jar),
        "PAYMENTS_PORT": str(free_port()),
        "COMMERCE_PORT": str(free_port()),
    }
    run = run_member_kit(MEMBER / "scripts" / "kit.sh", env, junit, timeout_s=300)
    run.assert_clean(EXPECTED_SKIPS)
    passed = run.passed
    # Its answers (read from the ledger) stay in the output schema; its refusals carry the code.
    for check in (
        "TOOL-008 successful output stays inside the declared output schema",
        "TOOL-009 an unknown or foreign resource is NOT_FOUND",
        "ERR-005 tool errors carry the code in _meta, never in structuredContent",
        "TOOL-010 a request without a credential is 401 naming the resource metadata",
        "TOOL-012 a call about another customer than the verified one is PERMISSION_DENIED",
    ):
        assert check in passed
    assert len(passed) == 13


@contextmanager
def java_commerce(
    jar: Path, mesh: Mesh, port: int, token_file: Path | None = None
) -> Iterator[str]:
    """The Java server on ``port`` beside ``mesh``'s payments, trusting what the mesh's
    services trust (the session's keys and trust table); it signs its token for refunds.list
    with commerce's own key ring, or sends the one in ``token_file``. Its base URL until the
    block ends."""
    ensure_ring("commerce", keys_dir())  # as `accord keys rotate commerce` provisions it
    env = {**os.environ, **mesh.env, "PORT": str(port)}
    if token_file is not None:
        env["ACCORD_SERVICE_TOKEN_FILE"] = str(token_file)
    log = (mesh.log_dir / f"commerce-java-{port}.log").open("wb")
    process = subprocess.Popen(
        ["java", "-jar", str(jar)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, deadline_s=60, service="commerce")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
        log.close()


def _answer(result: types.CallToolResult) -> dict[str, Any]:
    """A result as comparable data: the output, or the contract code of the error."""
    if result.is_error:
        return {"error": AccordError.from_mcp_result(result.model_dump(by_alias=True)).code.value}
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _calls() -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """Every seeded order's lookup and history, each customer's history, and refusals."""
    calls: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
    for order in seed.ORDERS:
        args = {"order_id": order.order_id, "customer_id": order.customer_id}
        calls += [("orders.lookup", args, None), ("orders.customer_history", args, None)]
    for customer in seed.CUSTOMERS:
        calls.append(("customers.history", {"customer_id": customer.customer_id}, None))
    other = {"app": "accord", "user": "C-02", "session": "tests"}
    calls += [
        ("orders.lookup", {"order_id": "O-1003", "customer_id": "C-01"}, None),  # C-02's
        ("orders.lookup", {"order_id": "O-7777", "customer_id": "C-01"}, None),  # none
        ("customers.history", {"customer_id": "C-9999"}, None),  # no such customer
        ("orders.lookup", {"order_id": "not-an-order", "customer_id": "C-01"}, None),
        ("customers.history", {"customer_id": 7}, None),
        ("orders.lookup", {"order_id": "O-1001", "customer_id": "C-01", "x": 1}, None),
        # A delegation for C-02, arguments naming C-01: the access question, before any data.
        ("orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"}, {"tenant": other}),
        # An app this server does not serve.
        ("customers.history", {"customer_id": "C-01"}, {"tenant": {**other, "app": "shop"}}),
        ("customers.history", {"customer_id": "C-01"}, {"tenant": {"user": "C-01"}}),
    ]
    return calls


# A customer's own token (the mesh's HS256 secret, as `accord token --user C-01` mints one):
# about themselves with no delegation; another's order NOT_FOUND; naming another customer, or
# a delegation for another user, PERMISSION_DENIED.
CUSTOMER_CALLS: Final = [
    ("orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"}, None),
    ("customers.history", {"customer_id": "C-01"}, None),
    ("orders.lookup", {"order_id": "O-1003", "customer_id": "C-01"}, None),
    ("customers.history", {"customer_id": "C-02"}, None),
    (
        "customers.history",
        {"customer_id": "C-01"},
        {"tenant": {"app": "accord", "user": "C-02", "session": "s"}},
    ),
]


async def _answers(url: str) -> list[dict[str, Any]]:
    found = []
    async with ServiceClient(url + "/mcp") as client:
        for tool, args, delegation in _calls():
            options = {} if delegation is None else {"meta": {"dev.accord/delegation": delegation}}
            found.append(_answer(await client.call_tool(tool, args, **options)))
    async with Client(transport(url + "/mcp", token("C-01"))) as client:
        for tool, args, delegation in CUSTOMER_CALLS:
            meta = None if delegation is None else {"dev.accord/delegation": delegation}
            found.append(_answer(await client.call_tool(tool, args, meta=meta)))
    return found


def _host_refusals(url: str) -> list[int]:
    """The status of an initialize sent with a foreign Host header (with and without a valid
    credential), and of one sent with the server's own."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }
    statuses = []
    for host, credential in (("evil.example", True), ("evil.example", False), (None, True)):
        headers = {**MCP_HEADERS, **({"Host": host} if host else {})}
        if credential:
            headers["Authorization"] = f"Bearer {sign_as(TEST_SERVICE)}"
        statuses.append(
            httpx.post(url + "/mcp", json=body, headers=headers, timeout=10).status_code
        )
    return statuses


def _same_instant(python: dict[str, Any], java: dict[str, Any], key: str) -> None:
    """The seeds' dates are relative to each server's first start: seconds apart."""
    a, b = python.pop(key, None), java.pop(key, None)
    assert (a is None) == (b is None), key
    if a is not None:
        apart = datetime.fromisoformat(a) - datetime.fromisoformat(b)
        assert abs(apart.total_seconds()) < 300, (key, a, b)
        assert a.endswith("Z")
        assert b.endswith("Z")
        assert len(a) == len(b) == 20


async def test_java_commerce_answers_as_the_python_one(jar: Path, tmp_path: Path) -> None:
    with running_mesh(tmp_path, services=("payments", "commerce")) as mesh:
        # Python's commerce connects to payments in the background: asked once it is ready.
        wait_healthy(mesh.url("commerce"), deadline_s=60, path="/readyz")
        with java_commerce(jar, mesh, free_port()) as java_url:
            python = await _answers(mesh.url("commerce"))
            java = await _answers(java_url)
            hosts = [_host_refusals(url) for url in (mesh.url("commerce"), java_url)]
        # ACCORD_SERVICE_TOKEN_FILE: the token someone else rotates, sent instead of its own.
        token_file = tmp_path / "commerce.token"
        token_file.write_text(sign_as("commerce", scopes=["refunds.list"]))
        with java_commerce(jar, mesh, free_port(), token_file) as java_url:
            async with ServiceClient(java_url + "/mcp") as client:
                c04 = await client.call_tool("customers.history", {"customer_id": "C-04"})
        token_file.write_text("not a token")
        with java_commerce(jar, mesh, free_port(), token_file) as java_url:
            async with ServiceClient(java_url + "/mcp") as client:
                refused = await client.call_tool("customers.history", {"customer_id": "C-04"})
    assert _answer(c04)["refunded_cents_90d"] == 33199
    # Payments refuses the bad token: commerce reports payments' error, never stale money.
    assert _answer(refused) == {"error": ErrorCode.UNAUTHENTICATED.value}
    # A Host header no pattern admits (DNS rebinding): 421 once the credential passed, 401 before.
    assert hosts[0] == hosts[1] == [421, 401, 200]
    asked = [*_calls(), *CUSTOMER_CALLS]
    assert len(python) == len(java) == len(asked)
    codes = []
    for (tool, args, _), py, jv in zip(asked, python, java, strict=True):
        for key in ("ordered_at", "delivered_at"):
            _same_instant(py, jv, key)
        assert jv == py, (tool, args)
        codes.append(py.get("error"))
    # The refusals are the contract's, not some error: every kind was asked and answered alike.
    assert codes[-3:] == [ErrorCode.NOT_FOUND.value, *[ErrorCode.PERMISSION_DENIED.value] * 2]
    assert python[-5]["refunded_cents"] == 0  # the customer's own view, through the ledger
    assert codes[-14:-5] == [
        ErrorCode.NOT_FOUND.value,
        ErrorCode.NOT_FOUND.value,
        ErrorCode.NOT_FOUND.value,
        ErrorCode.INVALID_INPUT.value,
        ErrorCode.INVALID_INPUT.value,
        ErrorCode.INVALID_INPUT.value,
        ErrorCode.PERMISSION_DENIED.value,
        ErrorCode.PERMISSION_DENIED.value,
        ErrorCode.INVALID_INPUT.value,
    ]
    # C-04's five refunds of the last 90 days are the ledger's, read by both.
    c04 = python[[a for _, a, _ in _calls()].index({"customer_id": "C-04"})]
    assert (c04["refunds_90d"], c04["refunded_cents_90d"]) == (5, 33199)


async def test_a_refund_through_the_orchestrator_with_the_java_commerce(
    jar: Path, tmp_path: Path
) -> None:
    # Every service but commerce: the Java server takes commerce's port, so the orchestrator,
    # policy-check and risk-check (ACCORD_COMMERCE_URL) call it and nothing else.
    with (
        running_mesh(tmp_path, services=("payments", "policy", "risk", "orchestrator")) as mesh,
        java_commerce(jar, mesh, mesh.ports["commerce"]) as java_url,
        # The interop matrix's (Python, Java) cell: the orchestrator's MCP client and the member.
        interop_matrix.cell(
            "Python",
            "Java",
            client_version=python_version(),
            service_contract=declared_at("commerce", java_url).service_contract,
            note="the orchestrator's MCP client to the Java commerce: a partial refund of O-1001 "
            "looked up there",
        ),
    ):
        done = await ask(mesh, "C-01", "I changed my mind, refund $10 of order O-1001")
        assert done.status is Status.COMPLETED, done.error
        result = done.data or {}
        assert result["decision"] == "refunded"
        assert result["receipt"]["amount_cents"] == 1000
        assert ledger_sums(mesh)["O-1001"] == (1, 1000)
        async with ServiceClient(java_url + "/mcp") as client:
            view = _answer(
                await client.call_tool(
                    "orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"}
                )
            )
        # The Java server reports the refund the ledger holds, read at the time of the call.
        assert view["refunded_cents"] == 1000
        assert view["refundable_cents"] == 5999 - 1000
        assert [r["receipt_id"] for r in view["refunds"]] == [result["receipt"]["receipt_id"]]
        log = (mesh.log_dir / f"commerce-java-{mesh.ports['commerce']}.log").read_text()
        assert "commerce-java serving" in log
