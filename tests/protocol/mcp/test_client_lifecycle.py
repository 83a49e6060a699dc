"""ToolClient's lifecycle: one client per process, each server connected, listed and checked
once (again only after a reconnect), readiness read from its state, observers of every call."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import pytest

from accord.agents.runner.inprocess import Lifespan
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.in_process import InProcessServers
from accord.protocol.mcp.client import ServerState, ToolCallEvent, ToolClient
from accord.protocol.mcp.config import ServerSpec
from accord.protocol.sent import never_sent
from tests.protocol.mcp.servers import build_app
from tests.protocol.mcp.support import FAST_RETRY, ROOT, FakeServers, contracts, http_spec
from tests.support.mcp_requests import CountingApp
from tests.support.processes import free_port, wait_healthy

LOOKUP = {"order_id": "O-1001", "customer_id": "C-01"}
DEADLINE_S = 30.0


@asynccontextmanager
async def _counted_servers() -> AsyncIterator[tuple[CountingApp, str, InProcessServers]]:
    """The test servers in this process (no socket), behind a request counter."""
    url = f"http://127.0.0.1:{free_port()}"
    app = build_app()
    counted = CountingApp(app)
    servers = InProcessServers()
    async with Lifespan(app, "test-servers"):
        stop = servers.serve(url, counted)
        try:
            yield counted, f"{url}/good/mcp", servers
        finally:
            stop()


@contextmanager
def _server_process(port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.protocol.mcp.servers", "--port", str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, deadline_s=DEADLINE_S)
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


async def _until(tools: ToolClient, state: ServerState) -> None:
    """Wait (with a deadline) until the only server is in ``state``."""
    end = time.monotonic() + DEADLINE_S
    while tools.statuses()[0].state is not state:
        assert time.monotonic() < end, tools.statuses()
        await anyio.sleep(0.05)


async def test_many_calls_and_readiness_probes_use_one_checked_session() -> None:
    async with _counted_servers() as (counted, url, servers):
        spec = ServerSpec.http("good", url, contracts())
        async with ToolClient.for_servers([spec], in_process=servers) as tools:
            for i in range(10):
                assert (await tools.call("debug.echo", {"text": f"n{i}"}))["text"] == f"n{i}"
            for _ in range(5):
                assert await tools.ready()
                assert await tools.ready("debug.echo", wait_s=1)
            [status] = tools.statuses()
    assert (status.state, status.connects, status.error) == (ServerState.READY, 1, None)
    assert counted.counts["tools/list"] == 1
    assert counted.counts["tools/call debug.echo"] == 10
    # Nothing but the calls and one handshake reached the server.
    handshake = sum(n for m, n in counted.counts.items() if not m.startswith("tools/call"))
    assert handshake <= 3, counted.counts


async def test_start_does_not_wait_for_a_server_and_readiness_follows_it(tmp_path: Path) -> None:
    port = free_port()
    spec = ServerSpec.http("good", f"http://127.0.0.1:{port}/good/mcp", contracts())
    tools = ToolClient.for_servers([spec], retry=FAST_RETRY)
    async with tools.running():  # nothing listens yet: the client starts all the same
        assert not await tools.ready(wait_s=5)
        [down] = tools.statuses()
        assert down.state is ServerState.DOWN
        assert down.error is not None
        assert down.error.code is ErrorCode.UNAVAILABLE
        with pytest.raises(AccordError) as info:
            await tools.call("orders.lookup", LOOKUP)
        assert info.value.code is ErrorCode.UNAVAILABLE
        assert never_sent(info.value)  # nothing listens: the call never left

        with _server_process(port, tmp_path / "servers.log"):
            await _until(tools, ServerState.READY)  # reconnected in the background
            assert (await tools.call("orders.lookup", LOOKUP))["order_id"] == "O-1001"
            assert tools.statuses()[0].connects == 1
        # The server died: the next call finds it gone, and the client is not ready any more.
        with pytest.raises(AccordError) as info:
            await tools.call("orders.lookup", LOOKUP)
        assert info.value.code is ErrorCode.UNAVAILABLE
        assert never_sent(info.value)  # refused at connect, on the session it had
        assert not await tools.ready()

        with _server_process(port, tmp_path / "servers.log"):
            await _until(tools, ServerState.READY)
            assert (await tools.call("orders.lookup", LOOKUP))["order_id"] == "O-1001"
            # A server that came back is listed and checked again before it is used.
            assert tools.statuses()[0].connects == 2
    assert tools.statuses()[0].state is ServerState.CLOSED


async def test_observers_see_every_call_and_its_outcome(fake_servers: FakeServers) -> None:
    seen: list[ToolCallEvent] = []
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        unsubscribe = tools.observe(seen.append)
        await tools.call("orders.lookup", LOOKUP)
        with pytest.raises(AccordError):
            await tools.call("orders.lookup", {"order_id": "1001", "customer_id": "C-01"})
        await tools.call(
            "refunds.issue",
            {"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 5, "reason": "x"},
            idempotency_key=f"refund:{uuid.uuid4().hex[:12]}",
        )
        unsubscribe()
        await tools.call("debug.echo", {"text": "unobserved"})
    assert [(e.tool, e.ended) for e in seen] == [
        ("orders.lookup", False),
        ("orders.lookup", True),
        ("orders.lookup", False),
        ("orders.lookup", True),
        ("refunds.issue", False),
        ("refunds.issue", True),
    ]
    for start, end in zip(seen[::2], seen[1::2], strict=True):
        assert start.call_id == end.call_id
    assert seen[1].result is not None
    assert seen[1].result["order_id"] == "O-1001"
    assert seen[3].error is not None
    assert seen[3].error.code is ErrorCode.INVALID_INPUT
    assert seen[4].arguments["idempotency_key"].startswith("refund:")
    assert seen[5].result is not None
    assert seen[5].result["receipt"]["idempotency_key"] == seen[4].arguments["idempotency_key"]


async def test_started_and_closed_once_from_any_task(fake_servers: FakeServers) -> None:
    tools = ToolClient.for_servers([http_spec(fake_servers, "good")])
    await asyncio.create_task(tools.start())  # one task starts it (the Runner's first request)
    with pytest.raises(AccordError) as twice:
        await tools.start()
    assert twice.value.code is ErrorCode.INVALID_INPUT
    await tools.connected()
    assert (await tools.call("debug.echo", {"text": "a"}))["text"] == "a"
    await asyncio.create_task(tools.aclose())  # another one closes it
    assert tools.statuses()[0].state is ServerState.CLOSED
    with pytest.raises(AccordError) as closed:
        await tools.call("debug.echo", {"text": "b"})
    assert closed.value.code is ErrorCode.UNAVAILABLE
