"""Fixtures: the fault-injecting MCP test servers, run as one real process for the session."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from accord.protocol import breaker
from tests.protocol.mcp.support import ROOT, FakeServers
from tests.support.processes import free_port, wait_healthy


@pytest.fixture(scope="session")
def fake_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeServers]:
    port = free_port()
    log = tmp_path_factory.mktemp("mcp-fake") / "servers.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.protocol.mcp.servers", "--port", str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc, deadline_s=30)
        yield FakeServers(base)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(autouse=True)
def closed_breakers() -> None:
    """Each test starts with every dependency's breaker closed: the breakers are per process
    (shared by every client of one server, as in production), and these tests share the fake
    servers, so one test's failures must not open the breaker the next test calls through."""
    # The registry is private on purpose (production never resets it); a test reset is the
    # one place that may.
    with breaker._LOCK:  # noqa: SLF001
        breaker._BREAKERS.clear()  # noqa: SLF001
