"""Retries at one level: a persistently failing tool is called at most ``max_attempts`` times
by the whole refund workflow (the client retries by the error's retry class; the nodes do not
retry it again), and the workflow fails within the client's bound.

The real commerce server (ACCORD_FAULTS makes its orders.lookup fail) is served in this process
behind a request counter; the Runner drives the real orchestrator graph against it, with
policy-check and risk-check in process too.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from tests.agents.runner.helpers import collect, final
from tests.support.mcp_requests import CountingApp
from tests.support.processes import free_port

from accord.agents.runner import Runner
from accord.agents.runner.inprocess import Lifespan
from accord.contracts.errors import ErrorCode
from accord.contracts.retry import RetryPolicy
from accord.contracts.status import Status
from accord.contracts.tools import tool_contract
from accord.protocol.mcp.config import ServerSpec, ToolsConfig
from accord.protocol.mcp.in_process import serve_in_process
from accord.protocol.service import discover_services
from accord.protocol.settings import ServeOptions

pytestmark = pytest.mark.timeout(120)

TIMEOUT_S = 0.5
RETRY = RetryPolicy(max_attempts=4, base_delay_ms=50, max_delay_ms=200, deadline_ms=20_000)
# The client's own worst case: every attempt runs to its timeout, every backoff to its cap.
CLIENT_BOUND_S = RETRY.max_attempts * TIMEOUT_S + sum(
    RETRY.backoff_cap_ms(a) / 1000 for a in range(1, RETRY.max_attempts)
)
LOOKUP = "tools/call orders.lookup"


@asynccontextmanager
async def _counted_commerce(tmp_path: Path) -> AsyncIterator[tuple[CountingApp, str]]:
    url = f"http://127.0.0.1:{free_port()}"
    options = ServeOptions(database_url=f"sqlite:///{tmp_path / 'counted-commerce.db'}")
    app = discover_services()["commerce"].build_app(options)
    counted = CountingApp(app)
    async with Lifespan(app, "counted-commerce"):
        stop = serve_in_process(url, counted)
        try:
            yield counted, f"{url}/mcp"
        finally:
            stop()


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("orders.lookup=UNAVAILABLE:1000000", ErrorCode.UNAVAILABLE),
        # Each call outlives the attempt's timeout: RETRYABLE_TIMEOUT, retried the same way.
        ("orders.lookup=latency:5000", ErrorCode.RETRYABLE_TIMEOUT),
    ],
    ids=["unavailable", "timeout"],
)
async def test_a_failing_tool_is_called_max_attempts_times_per_workflow(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, fault: str, code: ErrorCode
) -> None:
    monkeypatch.setenv("ACCORD_DEV", "1")  # fault injection is refused outside development
    monkeypatch.setenv("ACCORD_FAULTS", fault)
    async with _counted_commerce(data_dir) as (counted, url):
        commerce = ServerSpec.http(
            "commerce", url, [tool_contract("orders.lookup"), tool_contract("customers.history")]
        )
        tools = ToolsConfig(servers=(commerce,), timeout_s=TIMEOUT_S, retry=RETRY)
        async with Runner(in_process=True, tools=tools) as runner:
            started = time.monotonic()
            events = await collect(runner, "wrong size, refund O-1001", user="C-01", session="s")
            elapsed = time.monotonic() - started
    answer = final(events)
    assert answer.status is Status.FAILED
    assert (answer.error or {}).get("code") == code.value
    # order, policy and risk all need the order: one shared lookup, retried by the client only.
    assert counted.counts[LOOKUP] == RETRY.max_attempts, counted.counts
    # Intake and the nodes add little; the bound is the client's, not nodes x client.
    assert elapsed < CLIENT_BOUND_S + 10, elapsed
