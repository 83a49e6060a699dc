"""The TypeScript tickets tool server (tools/ts/tickets) keeps Accord's tool contract.

The kit half runs the server's own script (scripts/kit.sh, what `make ts-tools` runs): it builds
@accord/contract and the server, starts it with a trust table of its own, and runs
`accord contract-test` with the server's contracts and probes; the kit's JUnit report must show
every check passed. The other half starts the server itself and calls it with Accord's own MCP
client: a ticket opened once per key, across a restart (the keys are in SQLite), and refused
callers. Skipped locally without the npm packages (`make npm`); on CI (CI set) it must run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from tests.interop.member_kit import run_member_kit
from tests.mesh.mesh_support import ROOT, node_env
from tests.security.tool_servers import call, code
from tests.support.ports import free_port
from tests.support.processes import Service, wait_healthy
from tests.support.service_keys import sign_as

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import TOOL_DELEGATION_META_KEY
from accord.protocol.service_keys import JWKS_FILE, ensure_ring, keys_dir

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]

SERVER: Final = ROOT / "tools" / "ts" / "tickets"


def _ready() -> dict[str, str]:
    env = node_env()  # Node 22 first on PATH (node:sqlite); fails on CI without the packages
    if not (SERVER / "node_modules").is_dir():
        if os.environ.get("CI"):
            pytest.fail("tools/ts/tickets/node_modules is missing on CI (make npm)")
        pytest.skip("the tickets server's npm packages are not installed (make npm)")
    return env


def test_kit_passes_the_typescript_tool_server(tmp_path: Path) -> None:
    env = _ready()
    junit = tmp_path / "kit.xml"
    env.update(BIN=str(Path(sys.executable).parent), TICKETS_PORT=str(free_port()))
    run = run_member_kit(SERVER / "scripts" / "kit.sh", env, junit, timeout_s=200)
    run.assert_clean()
    required = ("TOOL-006", "TOOL-007", "TOOL-010", "TOOL-011", "TOOL-012", "ERR-005")
    for requirement in required:
        assert any(n.startswith(requirement) for n in run.passed), requirement


# -- the server as a client meets it -------------------------------------------------------------


def _start(env: dict[str, str], base: Path, port: int) -> Service:
    log = base / f"tickets-{port}.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            ["node", str(SERVER / "dist" / "server.js")],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    service = Service("tickets", port, process, log)
    wait_healthy(service.url, process, deadline_s=60)
    return service


@pytest.fixture(scope="module")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Path]:
    env = _ready()
    for folder in (ROOT / "contracts" / "ts", SERVER):
        subprocess.run(["npm", "run", "--silent", "build"], cwd=folder, env=env, check=True)
    base = tmp_path_factory.mktemp("tickets")
    for service in ("orchestrator", "risk"):
        ensure_ring(service, keys_dir())
    trust = {
        "services": {
            "orchestrator": {
                "jwks": str(keys_dir() / "orchestrator" / JWKS_FILE),
                "grants": ["tickets.open", "tickets.get"],
            },
            "risk": {"jwks": str(keys_dir() / "risk" / JWKS_FILE), "grants": ["tickets.get"]},
        }
    }
    (base / "trust.json").write_text(json.dumps(trust))
    return (
        {**env, "TICKETS_TRUST": str(base / "trust.json"), "TICKETS_DB": str(base / "t.db")},
        base,
    )


def _meta(customer: str, app: str = "accord") -> dict[str, Any]:
    return {TOOL_DELEGATION_META_KEY: {"tenant": {"app": app, "user": customer}}}


OPEN: Final = {
    "idempotency_key": "ticket:O-1001:req-1",
    "customer_id": "C-01",
    "order_id": "O-1001",
    "subject": "The box arrived crushed",
    "body": "The shoes are fine; the box was crushed.",
}


async def _call(url: str, service: str, tool: str, args: dict[str, Any], meta: Any) -> Any:
    """The structured answer, or the contract code of a refusal."""
    result = await call(url, tool, args, token=sign_as(service), meta=meta)
    return code(result) if result.is_error else result.structured_content


async def test_a_key_opens_one_ticket_across_a_restart(
    server_env: tuple[dict[str, str], Path],
) -> None:
    env, base = server_env
    port = free_port()
    first = _start({**env, "PORT": str(port)}, base, port)
    url = f"{first.url}/mcp"
    try:
        opened = await _call(url, "orchestrator", "tickets.open", OPEN, _meta("C-01"))
    finally:
        first.stop()
    assert opened["replayed"] is False
    again = _start({**env, "PORT": str(port)}, base, port)
    try:
        replayed = await _call(url, "orchestrator", "tickets.open", OPEN, _meta("C-01"))
        read = await _call(
            url,
            "risk",
            "tickets.get",
            {"ticket_id": opened["ticket"]["ticket_id"], "customer_id": "C-01"},
            _meta("C-01"),
        )
        # risk holds tickets.get only; another app's delegation is not one it acts for.
        write = await _call(url, "risk", "tickets.open", OPEN, _meta("C-01"))
        other_app = await _call(url, "orchestrator", "tickets.open", OPEN, _meta("C-01", "shop"))
        other_customer = await _call(
            url,
            "orchestrator",
            "tickets.get",
            {"ticket_id": opened["ticket"]["ticket_id"], "customer_id": "C-02"},
            _meta("C-02"),
        )
    finally:
        again.stop()
    assert replayed == {"ticket": opened["ticket"], "replayed": True}
    assert read == opened["ticket"]
    assert write is ErrorCode.PERMISSION_DENIED
    assert other_app is ErrorCode.PERMISSION_DENIED
    assert other_customer is ErrorCode.NOT_FOUND


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, -32700),
        (b"\xff\xfe", 400, -32700),
        (b"[" * 10 + b"x" * 2_000_000, 413, None),
    ],
    ids=["not JSON", "not UTF-8", "over 1 MB"],
)
def test_a_body_it_cannot_read_is_a_typed_refusal(
    server_env: tuple[dict[str, str], Path], body: bytes, status: int, code: int | None
) -> None:
    env, base = server_env
    port = free_port()
    server = _start({**env, "PORT": str(port)}, base, port)
    try:
        answer = httpx.post(
            f"{server.url}/mcp",
            content=body,
            headers={
                "Authorization": f"Bearer {sign_as('orchestrator')}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            timeout=10,
        )
    finally:
        server.stop()
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]  # JSON, never the framework's HTML page
    if code is not None:
        assert error["code"] == code
    assert ErrorCode.INVALID_INPUT.value in json.dumps(error["data"])
    assert "node_modules" not in answer.text  # no stack trace
