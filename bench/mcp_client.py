"""MCP client: ToolClient.call against the bare SDK session, same server, same run.

One test tool server process (tests/protocol/mcp/servers.py, stateless JSON over Streamable
HTTP) serves ``debug.echo``. Measured for a few seconds each at the same concurrency:

- baseline: the SDK's ``mcp.Client``, one session, ``session.call_tool`` (no contract work);
- ToolClient: one shared session plus input/output validation, retry bookkeeping, traceparent;
- session per call: a fresh ``mcp.Client`` for every call (why ToolClient keeps one session);
- client per call: a fresh ToolClient for every call (connect, ``tools/list``, contract check,
  call, close): what a service that opens its tool client per turn pays.

Figures are calls/s and latency percentiles, with throughput as a ratio to the baseline.
Target: ToolClient >= 0.8x the bare SDK session.

    .venv/bin/python bench/mcp_client.py [--seconds 3] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp import Client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.protocol.mcp.paths import ECHO_CONTRACT  # noqa: E402
from tests.support.processes import free_port, wait_healthy  # noqa: E402

from accord.contracts.tools import load_tool_contract  # noqa: E402
from accord.protocol.mcp.client import ToolClient  # noqa: E402
from accord.protocol.mcp.config import ServerSpec  # noqa: E402

Call = Callable[[int], Awaitable[object]]


async def measure(call: Call, seconds: float, concurrency: int) -> tuple[float, float, float]:
    """(calls/s, p50 ms, p95 ms) of ``call`` run by ``concurrency`` workers for ``seconds``."""
    latencies: list[float] = []
    end = time.perf_counter() + seconds

    async def worker(w: int) -> None:
        i = 0
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            await call(w * 1_000_000 + i)
            latencies.append(time.perf_counter() - t0)
            i += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    elapsed = time.perf_counter() - started
    latencies.sort()

    def pct(p: float) -> float:  # nearest rank
        return latencies[max(0, int(p * len(latencies) + 0.999999) - 1)] * 1000

    return len(latencies) / elapsed, pct(0.50), pct(0.95)


async def run(url: str, seconds: float, concurrency: int) -> None:
    echo = load_tool_contract(ECHO_CONTRACT)
    rows: list[tuple[str, tuple[float, float, float]]] = []

    async with Client(url, cache=None) as sdk:

        async def bare(i: int) -> object:
            return await sdk.session.call_tool("debug.echo", {"text": str(i)})

        await measure(bare, 0.5, concurrency)  # warm-up
        rows.append(("SDK session (baseline)", await measure(bare, seconds, concurrency)))

    async with ToolClient.for_servers([ServerSpec.http("bench", url, [echo])]) as tools:

        async def checked(i: int) -> object:
            return await tools.call(
                "debug.echo",
                {"text": str(i)},
                traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            )

        await measure(checked, 0.5, concurrency)
        rows.append(("ToolClient.call", await measure(checked, seconds, concurrency)))

    async def fresh(i: int) -> object:
        async with Client(url, cache=None) as one:
            return await one.session.call_tool("debug.echo", {"text": str(i)})

    rows.append(("session per call", await measure(fresh, seconds, concurrency)))

    async def per_turn(i: int) -> object:
        async with ToolClient.for_servers([ServerSpec.http("bench", url, [echo])]) as one:
            return await one.call("debug.echo", {"text": str(i)})

    rows.append(("client per call", await measure(per_turn, seconds, concurrency)))

    base = rows[0][1][0]
    print(f"debug.echo over Streamable HTTP, concurrency {concurrency}, {seconds:g} s each")
    print(f"{'client':<24}{'calls/s':>10}{'x baseline':>12}{'p50 ms':>10}{'p95 ms':>10}")
    for name, (rate, p50, p95) in rows:
        print(f"{name:<24}{rate:>10.0f}{rate / base:>12.2f}{p50:>10.1f}{p95:>10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    ns = parser.parse_args()
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.protocol.mcp.servers", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, deadline_s=60)
        asyncio.run(run(f"http://127.0.0.1:{port}/good/mcp", ns.seconds, ns.concurrency))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
