"""External conformance for the tool servers: the MCP conformance suite and the MCP Inspector CLI
against commerce and payments as real processes.

- `conformance server` (@modelcontextprotocol/conformance 0.1.16, Node >= 22) runs its active
  2025-11-25 suite with tests/interop/mcp_conformance_baseline.yml as the baseline: the
  protocol scenarios must pass; the others test capabilities and fixture tools our servers do
  not have (docs/conformance.md says why, per scenario), and the suite fails the run on a new
  failure or on a baseline entry that starts passing.
- The Inspector CLI calls tools (its `tools/list --strict` check is in
  tests/tools/test_interop_ts.py): a successful call's structured output, and a tool error
  with the contract code in `_meta`.

Tool servers need a credential. The Inspector sends one (`--header "Authorization: Bearer
..."`, and the delegation a service acts under with `--tool-metadata`); the conformance suite
has no option for a header, so it talks to the server through a proxy that adds a service
token, as a gateway would (tests/support/auth_proxy.py; Host headers pass through unchanged, so
its DNS-rebinding scenario still reaches the server's own check).

Skipped locally when the npm packages are not installed; on CI (CI set) they must run.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from tests.mesh import matrix
from tests.mesh.mesh_support import JS, NODE_MODULES, ROOT, declared_at, node_env, npm_version
from tests.mesh.support import SECRET
from tests.support.auth_proxy import running_proxy
from tests.support.processes import Service
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_servers import run_commerce

from accord.contracts.envelope import Tenant
from accord.contracts.errors import ErrorCode
from accord.contracts.keys import MCP_ERROR_META_KEY, TOOL_DELEGATION_META_KEY
from accord.contracts.tool_access import ToolDelegation

pytestmark = [pytest.mark.node, pytest.mark.timeout(300)]

BASELINE: Final = Path(__file__).with_name("mcp_conformance_baseline.yml")
CONFORMANCE: Final = NODE_MODULES / ".bin" / "conformance"
INSPECTOR: Final = NODE_MODULES / ".bin" / "mcp-inspector"
PROTOCOL_SCENARIOS: Final = ("server-initialize", "ping", "tools-list", "dns-rebinding-protection")
STAMP: Final = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")  # the suite's own directory suffix
TOOLS: Final = (
    "orders.lookup",
    "customers.history",
    "orders.customer_history",
    "refunds.issue",
    "refunds.get",
    "refunds.list",
)


def _service_token() -> str:
    """A service granted every tool (the servers share the mesh tests' secret)."""
    return sign_as(TEST_SERVICE, scopes=TOOLS)


def _acting_for(customer: str) -> str:
    """The Inspector's --tool-metadata pair: the delegation, as JSON (the CLI parses it)."""
    delegation = ToolDelegation(tenant=Tenant(app="accord", user=customer, session="inspector"))
    return f"{TOOL_DELEGATION_META_KEY}={delegation.model_dump_json(exclude_none=True)}"


@pytest.fixture(scope="module")
def tool_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Service]]:
    node_env()  # skip before starting anything when the npm packages are missing (locally)
    root = tmp_path_factory.mktemp("mcp-conformance")
    (root / "logs").mkdir()
    env = {"ACCORD_DATA_DIR": str(root / "data"), "ACCORD_JWT_SECRET": SECRET}
    with run_commerce(env, root / "logs") as (commerce, payments):
        yield {"commerce": commerce, "payments": payments}


@pytest.fixture(scope="module")
def proxied(
    tool_servers: dict[str, Service], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Service]]:
    """Each tool server behind the credential-adding proxy (for the conformance suite)."""
    logs = tmp_path_factory.mktemp("auth-proxy")
    token = _service_token()
    with (
        running_proxy(tool_servers["commerce"].url, token, logs) as commerce,
        running_proxy(tool_servers["payments"].url, token, logs) as payments,
    ):
        yield {"commerce": commerce, "payments": payments}


def _checks(out: Path) -> dict[str, list[dict[str, Any]]]:
    """scenario -> its checks, from the suite's result directories (server-NAME-TIMESTAMP)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in out.glob("server-*/checks.json"):
        name = STAMP.sub("", path.parent.name.removeprefix("server-"))
        found[name] = json.loads(path.read_text())
    return found


@pytest.mark.parametrize("service", ["commerce", "payments"])
def test_conformance_suite(
    tool_servers: dict[str, Service], proxied: dict[str, Service], tmp_path: Path, service: str
) -> None:
    server = proxied[service]
    said = declared_at(service, tool_servers[service].url)
    with matrix.cell(
        service,
        "mcp-conformance",
        client_version=npm_version("@modelcontextprotocol/conformance"),
        contract=said.contract,
        service_contract=said.service_contract,
        note="active 2025-11-25 suite: protocol scenarios pass; the rest are the suite's "
        "divergences (docs/conformance.md)",
    ):
        out = tmp_path / "results"
        run = subprocess.run(
            [
                str(CONFORMANCE),
                "server",
                "--url",
                server.url + "/mcp",
                "--spec-version",
                "2025-11-25",
                "--expected-failures",
                str(BASELINE),
                "-o",
                str(out),
            ],
            cwd=JS,
            env=node_env(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        # Exit 0: every failure is in the baseline and no baseline entry passes any more.
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
        checks = _checks(out)
        for scenario in PROTOCOL_SCENARIOS:
            got = checks.get(scenario)
            assert got, f"{scenario} did not run"
            assert all(c["status"] == "SUCCESS" for c in got), (scenario, got)
        baseline = set(yaml.safe_load(BASELINE.read_text())["server"])
        assert set(checks) <= baseline | set(PROTOCOL_SCENARIOS), set(checks) - baseline


def _inspect(url: str, tool: str, **args: str) -> tuple[int, dict[str, Any]]:
    """tools/call as a service granted the tools, acting for the arguments' customer."""
    run = subprocess.run(
        [str(INSPECTOR), "--cli", url, "--method", "tools/call", "--tool-name", tool,
         "--header", f"Authorization: Bearer {_service_token()}",
         "--tool-metadata", _acting_for(args["customer_id"]),
         "--tool-arg", *(f"{k}={v}" for k, v in args.items())],
        cwd=JS, env=node_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    # The result is printed as JSON first; a tool error adds an error line after it (exit 5).
    text = run.stdout
    result, _ = json.JSONDecoder().raw_decode(text[text.index("{") :])
    return run.returncode, result


@pytest.mark.parametrize("service", ["commerce", "payments"])
def test_inspector_calls_tools(tool_servers: dict[str, Service], service: str) -> None:
    server = tool_servers[service]
    said = declared_at(service, server.url)
    url = server.url + "/mcp"
    with matrix.cell(
        service,
        "mcp-inspector",
        client_version=npm_version("@modelcontextprotocol/inspector"),
        contract=said.contract,
        service_contract=said.service_contract,
        note="tools/call: structured output and a NOT_FOUND tool error in _meta "
        "(tools/list --strict: tests/tools/test_interop_ts.py)",
    ):
        if service == "commerce":
            code, ok = _inspect(url, "orders.lookup", order_id="O-1001", customer_id="C-01")
            assert code == 0, ok
            assert ok["isError"] is False
            assert ok["structuredContent"]["order_id"] == "O-1001"
            assert ok["structuredContent"]["total_cents"] == 5999
            missing = {"order_id": "O-1003", "customer_id": "C-01"}  # C-02's order
            code, err = _inspect(url, "orders.lookup", **missing)
        else:
            issue = {
                "idempotency_key": "inspector:O-1001",
                "order_id": "O-1001",
                "customer_id": "C-01",
                "amount_cents": "1",
                "reason": "inspector",
            }
            code, first = _inspect(url, "refunds.issue", **issue)
            assert code == 0, first
            assert first["isError"] is False
            code, again = _inspect(url, "refunds.issue", **issue)
            assert code == 0, again
            assert again["structuredContent"]["replayed"] is True
            receipts = [r["structuredContent"]["receipt"] for r in (first, again)]
            assert receipts[0] == receipts[1]
            assert receipts[0]["amount_cents"] == 1
            foreign = {**issue, "order_id": "O-1003", "idempotency_key": "inspector:O-1003"}
            code, err = _inspect(url, "refunds.issue", **foreign)
        assert code == 5, err  # the Inspector's exit status for a tool error
        assert err["isError"] is True
        assert err["_meta"][MCP_ERROR_META_KEY]["code"] == ErrorCode.NOT_FOUND.value
        assert "structuredContent" not in err  # errors never go in structuredContent


def test_every_baseline_entry_is_explained_in_the_docs() -> None:
    doc = (ROOT / "docs" / "conformance.md").read_text()
    entries = yaml.safe_load(BASELINE.read_text())["server"]
    missing = [e for e in entries if f"`{e}`" not in doc]
    assert not missing, f"docs/conformance.md does not explain {missing}"
