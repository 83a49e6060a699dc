"""What Accord's agent framework costs over a bare a2a-sdk agent doing the same thing (#37).

    .venv/bin/python bench/echo_overhead.py [--requests 400] [--c1-requests 100] [--rounds 2]

Two echo agents, each a real uvicorn process, measured one after the other by the same client
(``refund_e2e.load``: Accord's ``A2AClient``, streaming, a new task per request):

- Accord's: ``refund_e2e.py``'s baseline (``build_agent_app``: the request gate, the
  orchestrator's contract and its schemas, the durable SQLite task store);
- bare: a2a-sdk 1.3.0 alone (``DefaultRequestHandler``, its in-memory task store, no gate),
  answering with the same ``result`` artifact, so both answers read the same to the client.
  As shipped, the SDK's tracing wrappers run (with a no-op tracer) at every handler and queue
  call; Accord's agent removes them (telemetry/sdk_wrappers.py). ``--sdk-tracing-off`` sets
  the SDK's own switch (``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false``) for the bare agent,
  what a careful bare user would do: its wrappers then call a do-nothing object.

For each: requests/s at c1 and c16, c1 p50/p95 (nearest rank) and CPU ms per request of the
server process (``/proc``, its threads included) at c1 and c16. ``--rounds`` alternates which
agent goes first, so that a neighbour's load on a shared machine falls on both. Prints
``Accord echo CPU / bare echo CPU`` (c16, medians over the rounds) against the target
(<= 1.3) and the throughput ratio. ``--profile DIR`` records a py-spy profile of each agent
during its c16 run (``profiles.py``; the last round's is kept) and prints its summary.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from accord.protocol.telemetry.sdk_wrappers import A2A_SDK_TRACING
from profiles import Profiler, cpu_seconds, summarise
from refund_e2e import Run, load, pct, wait_healthy

CPU_TARGET: Final = 1.3
ROOT: Final = Path(__file__).resolve().parent.parent


def serve_bare(port: int) -> None:
    """The bare agent: a2a-sdk's handler and routes, an executor that answers at once."""
    sys.path.insert(0, str(ROOT))
    import uvicorn
    from a2a.helpers.proto_helpers import new_task_from_user_message
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.tasks.task_updater import TaskUpdater
    from tests.interop.diff_bare_agent import bare_app

    from accord.protocol.a2a.wire import data_part

    class BareRefundEcho(AgentExecutor):
        """Accord's echo's answer (the ``result`` DataPart artifact), by the SDK alone."""

        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            task = context.current_task or new_task_from_user_message(context.message)
            if context.current_task is None:
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            answer: dict[str, Any] = {
                "decision": "refunded",
                "order_id": None,
                "reasons": [],
                "receipt": None,
            }
            answer["explanation"] = context.get_user_input()
            await updater.add_artifact([data_part(answer)], name="result", last_chunk=True)
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            task = context.current_task
            if task is not None:
                await TaskUpdater(event_queue, task.id, task.context_id).cancel()

    uvicorn.run(bare_app(BareRefundEcho(), port), host="127.0.0.1", port=port, log_level="warning")


@dataclass(frozen=True)
class EchoFigures:
    """One agent's figures in one round."""

    c1_rate: float
    p50_ms: float
    p95_ms: float
    c1_cpu_ms: float
    c16_rate: float
    c16_cpu_ms: float
    failures: int


def _phase(url: str, pid: int, asks: list[tuple[str, str]], c: int) -> tuple[Run, float]:
    """One load run and the server's CPU ms per request over it."""
    before = cpu_seconds(pid)
    run = asyncio.run(load(url, asks, c))
    return run, (cpu_seconds(pid) - before) / len(asks) * 1000


def measure(name: str, args: argparse.Namespace, token: str) -> EchoFigures:
    from accord.cli.mesh import free_ports

    port = free_ports((name,))[name]
    here = Path(__file__).resolve().parent
    command = (
        [str(here / "refund_e2e.py"), "--serve-echo", str(port)]
        if name == "accord"
        else [__file__, "--serve-bare", str(port)]
    )
    env = {**os.environ, "ACCORD_DATA_DIR": tempfile.mkdtemp(prefix=f"accord-echo-{name}-")}
    if name == "bare" and args.sdk_tracing_off:
        env[A2A_SDK_TRACING] = "false"
    proc = subprocess.Popen([sys.executable, *command], env=env, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(f"{url}/healthz", proc)
        asks = [(token, "echo")]
        asyncio.run(load(url, asks * 64, args.concurrency))  # connections, caches, imports
        one, c1_cpu = _phase(url, proc.pid, asks * args.c1_requests, 1)
        profiler = None if args.profile is None else Profiler(args.profile, {name: proc.pid})
        started = time.perf_counter()
        many, c16_cpu = _phase(url, proc.pid, asks * args.requests, args.concurrency)
        if profiler is not None:
            profiler.stop()
            print(summarise(args.profile / f"{name}.txt", time.perf_counter() - started))
        return EchoFigures(
            c1_rate=len(one.latencies) / one.wall,
            p50_ms=pct(one.latencies, 50) * 1000,
            p95_ms=pct(one.latencies, 95) * 1000,
            c1_cpu_ms=c1_cpu,
            c16_rate=len(many.latencies) / many.wall,
            c16_cpu_ms=c16_cpu,
            failures=one.failures + many.failures,
        )
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=15)


def _row(name: str, e: EchoFigures, c: int) -> str:
    return (
        f"  {name:<8}{e.c1_rate:>8.1f}/s{e.p50_ms:>8.2f}{e.p95_ms:>8.2f}{e.c1_cpu_ms:>9.2f}"
        f"{e.c16_rate:>9.1f}/s{e.c16_cpu_ms:>9.2f}{e.failures:>6}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400, help="echoes at full concurrency")
    parser.add_argument("--c1-requests", type=int, default=100, help="echoes one at a time")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2, help="each alternates the order")
    parser.add_argument(
        "--profile", type=Path, default=None, help="py-spy profiles of each at c16 into DIR"
    )
    parser.add_argument(
        "--sdk-tracing-off", action="store_true", help="the bare agent with the SDK's spans off"
    )
    parser.add_argument("--serve-bare", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.serve_bare)
        return
    os.environ["ACCORD_JWT_SECRET"] = secrets.token_urlsafe(32)
    os.environ["ACCORD_RATE_LIMIT_PER_S"] = "0"  # one caller at full speed, as refund_e2e
    from accord.protocol.auth import mint_token

    token = mint_token("C-01", ["customer"])  # the bare agent ignores it; Accord's gate checks it
    c = args.concurrency
    print(
        f"echo agents, {args.c1_requests} at c1 and {args.requests} at c{c}, "
        f"{args.rounds} rounds, {os.cpu_count()} CPUs, "
        f"bare with the SDK's tracing {'off' if args.sdk_tracing_off else 'on (as shipped)'}"
    )
    print(
        f"  {'agent':<8}{'c1 req/s':>10}{'p50 ms':>8}{'p95 ms':>8}{'CPU c1':>9}"
        f"{f'c{c} req/s':>11}{f'CPU c{c}':>9}{'fail':>6}   (CPU: ms per request)"
    )
    got: dict[str, list[EchoFigures]] = {"accord": [], "bare": []}
    for n in range(args.rounds):
        order = ("accord", "bare") if n % 2 == 0 else ("bare", "accord")
        for name in order:
            got[name].append(measure(name, args, token))
            print(_row(name, got[name][-1], c))

    def median(name: str, field: str) -> float:
        return float(statistics.median(getattr(e, field) for e in got[name]))

    cpu = median("accord", "c16_cpu_ms") / median("bare", "c16_cpu_ms")
    verdict = "pass" if cpu <= CPU_TARGET else "MISS"
    print(f"medians over {args.rounds} rounds:")
    print(f"Accord echo CPU / bare echo CPU = {cpu:.2f} (target <= {CPU_TARGET}: {verdict})")

    def ratio(field: str) -> str:
        return f"{median('accord', field) / median('bare', field):.2f}x"

    print(f"  CPU at c1: {ratio('c1_cpu_ms')}")
    print(f"Accord echo throughput / bare: c1 {ratio('c1_rate')}, c{c} {ratio('c16_rate')}")
    print(f"  latency Accord / bare at c1: p50 {ratio('p50_ms')}, p95 {ratio('p95_ms')}")


if __name__ == "__main__":
    main()
