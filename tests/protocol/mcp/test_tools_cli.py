"""`accord tools check` and `accord tools list`, run as the real command line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.protocol.mcp.paths import ECHO_CONTRACT
from tests.protocol.mcp.support import ROOT, FakeServers
from tests.support import forked
from tests.support.processes import free_port


def accord(*args: str) -> subprocess.CompletedProcess[str]:
    env = forked.bare_env(COLUMNS="200")
    return forked.run(args, env, timeout=120, cwd=ROOT)


def test_check_passes_with_shipped_contracts(fake_servers: FakeServers) -> None:
    done = accord("tools", "check", fake_servers.url("good"), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["checked"] == ["orders.lookup", "refunds.issue", "refunds.get"]
    assert report["findings"] == []


def test_check_reports_violations_with_exit_1(fake_servers: FakeServers) -> None:
    done = accord("tools", "check", fake_servers.url("annotation"))
    assert done.returncode == 1
    assert "readOnlyHint" in done.stdout
    assert "CONTRACT_VIOLATION" in done.stdout


def test_missing_tool_is_a_violation(fake_servers: FakeServers) -> None:
    done = accord(
        "tools", "check", fake_servers.url("good"), "--contract", "customers.history", "--json"
    )
    assert done.returncode == 1
    [finding] = json.loads(done.stdout)["findings"]
    assert finding["kind"] == "missing_tool"


def test_server_without_contracted_tools_is_a_violation(fake_servers: FakeServers) -> None:
    done = accord("tools", "check", fake_servers.url("foreign"))
    assert done.returncode == 1
    assert "no contracted tools" in done.stdout
    # The same server passes once its own contract is given.
    done = accord("tools", "check", fake_servers.url("foreign"), "-c", str(ECHO_CONTRACT))
    assert done.returncode == 0, done.stdout


def test_unreachable_server_exits_2() -> None:
    done = accord("tools", "check", f"http://127.0.0.1:{free_port()}/mcp")
    assert done.returncode == 2
    assert "UNAVAILABLE" in done.stdout


def test_list_shows_configured_servers(tmp_path: Path) -> None:
    done = accord("tools", "list")
    assert done.returncode == 0, done.stderr
    assert "commerce" in done.stdout
    assert "http://127.0.0.1:8711/mcp" in done.stdout


def test_list_with_malformed_file_names_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "tools.yaml"
    bad.write_text("servers:\n  - {name: a, transport: http, tools: [orders.lookup]}\n")
    done = accord("tools", "list", "--config", str(bad))
    assert done.returncode == 2
    assert "INVALID_INPUT" in done.stdout
    assert "servers.0" in done.stdout
    assert "needs a url" in done.stdout
