"""Helpers of the MCP client tests: the test server process handle and server specs."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from accord.contracts.retry import RetryPolicy
from accord.contracts.tools import ToolContract, load_tool_contract, tool_contract
from accord.protocol.mcp.config import ServerSpec
from tests.protocol.mcp.paths import ECHO_CONTRACT

ROOT = Path(__file__).resolve().parents[3]
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay_ms=5, max_delay_ms=20, deadline_ms=10_000)


class FakeServers:
    """The test server process: scenario URLs and its call counters."""

    def __init__(self, base: str) -> None:
        self.base = base

    def url(self, scenario: str) -> str:
        return f"{self.base}/{scenario}/mcp"

    def calls(self, scenario: str, tool: str, key: str) -> int:
        counts = httpx.get(f"{self.base}/calls", timeout=5).json()
        return int(counts.get(f"{scenario}|{tool}|{key}", 0))


def contracts() -> list[ToolContract]:
    """What the test servers are checked against: three shipped contracts and debug.echo."""
    return [
        tool_contract("orders.lookup"),
        tool_contract("refunds.issue"),
        tool_contract("refunds.get"),
        load_tool_contract(ECHO_CONTRACT),
    ]


def http_spec(fake: FakeServers, scenario: str) -> ServerSpec:
    return ServerSpec.http(scenario, fake.url(scenario), contracts())


def stdio_spec(scenario: str) -> ServerSpec:
    return ServerSpec.stdio(
        scenario,
        sys.executable,
        ["-m", "tests.protocol.mcp.servers", "--stdio", scenario],
        contracts(),
        cwd=str(ROOT),
    )
