"""External conformance for the tool servers: the MCP conformance suite and the MCP Inspector CLI
against commerce and payments as real processes.

- `conformance server` runs once per MCP revision the servers speak (:data:`REVISIONS`):
  2025-06-18 and 2025-11-25 (the initialize handshake) with @modelcontextprotocol/conformance
  0.1.16, and 2026-07-28 (stateless: no initialize, version and capabilities in each request's
  `_meta`, the `Mcp-Method`/`Mcp-Name` headers) with 0.2.0-alpha.12, the first release with a
  run for it (`--requirements 2026-07-28`: the scenarios that revision requires). Each run has
  its baseline (tests/interop/mcp_conformance_REVISION.yml): the protocol scenarios must pass;
  the others test capabilities, extensions and fixture tools our servers do not have
  (docs/conformance.md says why, per scenario), and the suite fails the run on a new failure or
  on a baseline entry that starts passing.
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
from dataclasses import dataclass, field
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

BASELINES: Final = Path(__file__).parent
INSPECTOR: Final = NODE_MODULES / ".bin" / "mcp-inspector"


@dataclass(frozen=True)
class Revision:
    """One MCP revision's conformance run: which suite, how it is asked, what must pass."""

    package: str  # the npm package directory (two versions of the suite sit side by side)
    select: tuple[str, ...]  # the suite's options that pick the revision's scenarios
    protocol: tuple[str, ...]  # scenarios every check of which must succeed
    # Scenarios of the baseline whose other checks must succeed: check id -> why it cannot.
    untestable: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def entry(self) -> Path:
        return NODE_MODULES / self.package / "dist" / "index.js"


PASSED: Final = ("SUCCESS", "INFO")  # INFO: an optional behaviour, reported (SSE or JSON)
_DIAGNOSTIC = "needs a diagnostic tool of the suite's reference server"
REVISIONS: Final = {
    "2025-06-18": Revision(
        "@modelcontextprotocol/conformance",
        ("--spec-version", "2025-06-18"),
        ("server-initialize", "ping", "tools-list"),
    ),
    "2025-11-25": Revision(
        "@modelcontextprotocol/conformance",
        ("--spec-version", "2025-11-25"),
        ("server-initialize", "ping", "tools-list", "dns-rebinding-protection"),
    ),
    "2026-07-28": Revision(
        "mcp-conformance-next",
        ("--requirements", "2026-07-28"),
        (
            "tools-list",
            "dns-rebinding-protection",
            "http-header-validation",
            "server-sse-multiple-streams",
            "input-required-result-unsupported-methods",
            "input-required-result-validate-input",
        ),
        {
            "server-stateless": {
                "sep-2575-server-rejects-undeclared-capability": _DIAGNOSTIC,
                "sep-2575-missing-capability-http-400": _DIAGNOSTIC,
                "sep-2575-http-server-no-independent-requests-on-stream": _DIAGNOSTIC,
                "sep-2575-server-no-log-without-loglevel": _DIAGNOSTIC,
            }
        },
    ),
}
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


def _baseline(revision: str) -> Path:
    return BASELINES / f"mcp_conformance_{revision}.yml"


def _run_suite(url: str, revision: str, out: Path) -> list[str]:
    """What is wrong with ``revision``'s run against ``url`` (empty: nothing)."""
    run = REVISIONS[revision]
    done = subprocess.run(
        ["node", str(run.entry), "server", "--url", url, *run.select,
         "--expected-failures", str(_baseline(revision)), "-o", str(out)],
        cwd=JS, env=node_env(), capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    # Exit 0: every failure is in the baseline and no baseline entry passes any more.
    if done.returncode != 0:
        return [f"{revision}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-1000:]}"]
    checks = _checks(out)
    wrong = [
        f"{revision}: {scenario} did not pass: {checks.get(scenario)}"
        for scenario in run.protocol
        if not checks.get(scenario) or any(c["status"] not in PASSED for c in checks[scenario])
    ]
    for scenario, why_not in run.untestable.items():
        failed = {c["id"] for c in checks.get(scenario, []) if c["status"] == "FAILURE"}
        wrong += [f"{revision}: {scenario}: {c} failed" for c in failed - set(why_not)]
    baseline = set(yaml.safe_load(_baseline(revision).read_text())["server"])
    # A scenario whose checks the suite skipped as a whole (its harness is pending) tested nothing.
    tested = {name for name, ran in checks.items() if any(c["status"] != "SKIPPED" for c in ran)}
    unexpected = tested - baseline - set(run.protocol)
    wrong += [f"{revision}: {s} ran, neither protocol nor baseline" for s in unexpected]
    return wrong


@pytest.mark.parametrize("service", ["commerce", "payments"])
def test_conformance_suite(
    tool_servers: dict[str, Service], proxied: dict[str, Service], tmp_path: Path, service: str
) -> None:
    server = proxied[service]
    said = declared_at(service, tool_servers[service].url)
    versions = sorted({npm_version(r.package) for r in REVISIONS.values()})
    with matrix.cell(
        service,
        "mcp-conformance",
        client_version=", ".join(versions),
        contract=said.contract,
        service_contract=said.service_contract,
        note=f"revisions {', '.join(REVISIONS)}: protocol scenarios pass; the rest are the "
        "suite's divergences (docs/conformance.md)",
    ):
        wrong = [
            problem
            for revision in REVISIONS
            for problem in _run_suite(server.url + "/mcp", revision, tmp_path / revision)
        ]
        assert not wrong, "\n".join(wrong)


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


@pytest.mark.parametrize("revision", list(REVISIONS))
def test_every_baseline_entry_is_explained_in_the_docs(revision: str) -> None:
    doc = (ROOT / "docs" / "conformance.md").read_text()
    entries = yaml.safe_load(_baseline(revision).read_text())["server"]
    missing = [e for e in entries if f"`{e}`" not in doc]
    assert not missing, f"docs/conformance.md does not explain {missing}"
    assert f"mcp_conformance_{revision}.yml" in doc
