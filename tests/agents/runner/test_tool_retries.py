"""Retries at two levels: a persistently failing tool is retried by the MCP client (its
``max_attempts``, a blip) and, when that gives up, the workflow node retries it with backoff
within the request's deadline while the per-dependency breaker keeps the failing tool from being
hammered (docs/restarts.md); the workflow then fails UNAVAILABLE (the dependency degraded) by
the deadline.

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
from accord.protocol.in_process import InProcessServers
from accord.protocol.mcp.config import ServerSpec, ToolsConfig
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
DEADLINE_S = 6.0  # the request's deadline (the Runner's envelope)
# The node's backoff (UNTIL_DEADLINE) starts at 200 ms: within the deadline a node attempt (one
# client's full retries) starts at most every 200 ms after the previous one ended.
MOST_NODE_ATTEMPTS = int(DEADLINE_S / 0.2) + 1


@asynccontextmanager
async def _counted_commerce(
    tmp_path: Path, servers: InProcessServers
) -> AsyncIterator[tuple[CountingApp, str]]:
    """Commerce served in ``servers`` (the Runner's, where it finds payments), counted."""
    url = f"http://127.0.0.1:{free_port()}"
    options = ServeOptions(
        database_url=f"sqlite:///{tmp_path / 'counted-commerce.db'}", in_process=servers
    )
    app = discover_services()["commerce"].build_app(options)
    counted = CountingApp(app)
    async with Lifespan(app, "counted-commerce"):
        stop = servers.serve(url, counted)
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
async def test_a_failing_tool_is_retried_within_the_deadline_then_the_workflow_fails(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, fault: str, code: ErrorCode
) -> None:
    monkeypatch.setenv("ACCORD_DEV", "1")  # fault injection is refused outside development
    monkeypatch.setenv("ACCORD_FAULTS", fault)
    servers = InProcessServers()
    async with _counted_commerce(data_dir, servers) as (counted, url):
        commerce = ServerSpec.http(
            "commerce", url, [tool_contract("orders.lookup"), tool_contract("customers.history")]
        )
        tools = ToolsConfig(servers=(commerce,), timeout_s=TIMEOUT_S, retry=RETRY)
        async with Runner(
            in_process=True, in_process_servers=servers, tools=tools, deadline_s=DEADLINE_S
        ) as runner:
            started = time.monotonic()
            events = await collect(runner, "wrong size, refund O-1001", user="C-01", session="s")
            elapsed = time.monotonic() - started
    answer = final(events)
    assert answer.status is Status.FAILED
    error = answer.error or {}
    # After so many failures (of ``code``) commerce is degraded: calls are refused while its
    # breaker is open (docs/restarts.md). The last word is the breaker's refusal, or the fault
    # itself (``code``) when the last attempt was the probe a cool-down lets through; either
    # way the breaker refused calls on the way.
    assert error.get("code") in (ErrorCode.UNAVAILABLE.value, code.value), (code, error)
    errors = [error] + [
        r.response["error"]
        for e in events
        for r in e.get_function_responses()
        if isinstance(r.response.get("error"), dict)
    ]
    refused = [x for x in errors if x.get("details", {}).get("dependency") == "mcp:commerce"]
    assert refused, errors
    calls = counted.counts[LOOKUP]
    # Retried with backoff, not in a loop (order, policy and risk share one lookup), and once the
    # breaker opened, not at all until it would close: commerce is not hammered.
    assert RETRY.max_attempts <= calls <= RETRY.max_attempts * MOST_NODE_ATTEMPTS, counted.counts
    # It stops by the request's deadline (plus at most one client's retries in flight).
    assert elapsed < DEADLINE_S + CLIENT_BOUND_S + 10, elapsed
