"""End-to-end refunds through all five services, against a bare A2A round trip.

    .venv/bin/python bench/refund_e2e.py [--requests 64] [--concurrency 16]
        [--postgres] [--profile DIR]

Starts the mesh (five processes, SQLite, a fresh temporary data directory, free ports) and
seeds extra delivered orders, each of its own long-standing customer (bench only: rows written
with the tool servers' own table definitions), so that every request is a distinct order and a
real refunds.issue write that needs no approver. Each request is a customer's first message,
streamed: intake -> orders.lookup + policy-check + risk-check in parallel -> decide ->
refunds.issue. The baseline, in the same run on the same machine: a bare echo agent with the
same contract, gate and durable task store but no workflow and no children, at concurrency 1
and 16. Prints the issue's targets as ratios with pass/MISS.

``--postgres`` runs the same mesh a second time on one PostgreSQL database (a private cluster
from Debian's postgresql package, as the tests start it) and prints its ratio to SQLite.
``--profile DIR`` records py-spy profiles of every service during the concurrency-16 phase
(bench/profiles.py) and prints a summary of each.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import math
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from accord.contracts.status import Status
from profiles import Profiler, cpu_seconds, summarise

FIRST_ORDER = 5000
AMOUNT_CENTS = 1999


async def seed_orders(
    database: Callable[[str], str],
    count: int,
    *,
    first: int = FIRST_ORDER,
    amount_cents: int = AMOUNT_CENTS,
) -> list[tuple[str, str]]:
    """Extra delivered, refundable orders in commerce's and payments' databases, each of its own
    long-standing customer: one customer refunding many orders in a minute is high risk (an
    approver's decision) and would measure the wait for an approval, not a refund. ``first``:
    the number of the first order and customer; ``amount_cents``: each order's total (from the
    approval threshold on, 500.00 by default, every refund of it waits for an approver)."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from accord.tools.commerce_store import customers, order_items, orders
    from accord.tools.ledger import ledger_orders
    from accord.tools.seed import APP

    now = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    pairs = [(f"O-{first + i}", f"C-{first + i}") for i in range(count)]
    commerce = create_async_engine(database("commerce"))
    async with commerce.begin() as conn:
        await conn.execute(
            customers.insert(),
            [
                {
                    "app": APP,
                    "customer_id": cid,
                    "name": f"Bench customer {cid}",
                    "created_at": now - timedelta(days=400),
                    "chargebacks": 0,
                }
                for _, cid in pairs
            ],
        )
        await conn.execute(
            orders.insert(),
            [
                {
                    "app": APP,
                    "order_id": oid,
                    "customer_id": cid,
                    "status": "delivered",
                    "currency": "USD",
                    "ordered_at": now - timedelta(days=5),
                    "delivered_at": now - timedelta(days=3),
                }
                for oid, cid in pairs
            ],
        )
        await conn.execute(
            order_items.insert(),
            [
                {
                    "app": APP,
                    "order_id": oid,
                    "line": 1,
                    "sku": "BEN-001",
                    "name": "Bench socks",
                    "quantity": 1,
                    "unit_price_cents": amount_cents,
                    "category": "apparel",
                    "final_sale": False,
                }
                for oid, _ in pairs
            ],
        )
    await commerce.dispose()
    payments = create_async_engine(database("payments"))
    async with payments.begin() as conn:
        await conn.execute(
            ledger_orders.insert(),
            [
                {
                    "app": APP,
                    "order_id": oid,
                    "customer_id": cid,
                    "currency": "USD",
                    "total_cents": amount_cents,
                }
                for oid, cid in pairs
            ],
        )
    await payments.dispose()
    return pairs


def serve_echo(port: int) -> None:
    """The baseline agent: the orchestrator's contract, an executor that answers at once."""
    from accord.protocol.settings import current
    from accord.protocol.telemetry.sdk_wrappers import quiet_a2a_sdk_wrappers

    quiet_a2a_sdk_wrappers(current().otel_library_spans)  # as `accord serve` does, before a2a

    import uvicorn

    from accord.contracts.agents import agent_contract
    from accord.protocol.a2a.server import build_agent_app
    from accord.protocol.a2a.server.executor import (
        Completed,
        ContractExecutor,
        NeedsInput,
        Progress,
        Turn,
    )
    from accord.protocol.settings import ServeOptions

    class Echo(ContractExecutor):
        async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
            return Completed(
                data={
                    "decision": "refunded",
                    "order_id": None,
                    "reasons": [],
                    "receipt": None,
                    "explanation": turn.text,
                }
            )

    contract = agent_contract("orchestrator")
    options = ServeOptions(port=port)
    app = build_agent_app(contract, Echo(contract), options, service_name="echo")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


@dataclass
class Run:
    wall: float
    latencies: list[float]
    outcomes: collections.Counter[str]  # "completed/refunded", "waiting", "failed/CODE"...
    updates: int = 0  # streamed events the client received (each one serialised and parsed)

    @property
    def failures(self) -> int:
        return sum(n for k, n in self.outcomes.items() if k != "completed/refunded")


async def load(url: str, requests: list[tuple[str, str]], concurrency: int) -> Run:
    """Send each (customer token, text) as a new task, ``concurrency`` at a time."""
    import httpx

    from accord.protocol.a2a.client import A2AClient

    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=120.0), limits=limits) as http:
        first = await A2AClient.connect(url, token=requests[0][0], http=http)
        queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        for item in requests:
            queue.put_nowait(item)
        latencies: list[float] = []
        outcomes: collections.Counter[str] = collections.Counter()
        updates = 0

        def count(_view: object) -> None:
            nonlocal updates
            updates += 1

        async def worker() -> None:
            while not queue.empty():
                token, text = queue.get_nowait()
                client = A2AClient(first.card, http, token=token)  # the card resolved once
                started = time.perf_counter()
                view = await client.send(text=text, skill="refund.request", on_update=count)
                latencies.append(time.perf_counter() - started)
                detail = (
                    str((view.data or {}).get("decision"))
                    if view.status is Status.COMPLETED
                    else (view.error.code.value if view.error else view.a2a_state)
                )
                outcomes[f"{view.status.value}/{detail}"] += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return Run(time.perf_counter() - started, latencies, outcomes, updates)


def wait_healthy(url: str, proc: subprocess.Popen[bytes], deadline_s: float = 60.0) -> None:
    import httpx

    end = time.monotonic() + deadline_s
    while time.monotonic() < end and proc.poll() is None:
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not become healthy")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    # Nearest rank: the smallest value with at least p% of them at or below it. ceil, not
    # round(x + 0.5): round halves to even, which put P95 of 100 values at rank 96.
    rank = max(1, math.ceil(p * len(ordered) / 100))
    return ordered[min(rank, len(ordered)) - 1]


def report(name: str, run: Run) -> dict[str, float]:
    lat = run.latencies
    rate = len(lat) / run.wall
    p50, p99 = pct(lat, 50) * 1000, pct(lat, 99) * 1000
    print(
        f"{name:<34} {len(lat):>4} req {rate:7.1f}/s  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms"
        f"  mean {statistics.mean(lat) * 1000:7.1f} ms  not refunded {run.failures}"
        f"  updates/req {run.updates / len(lat):.1f}"
    )
    if run.failures:
        print(f"    outcomes: {dict(run.outcomes)}")
    return {"rate": rate, "p50": p50, "p99": p99}


def target(name: str, value: float, limit: float, *, at_least: bool) -> bool:
    ok = value >= limit if at_least else value <= limit
    sign = ">=" if at_least else "<="
    print(f"  {name:<44} {value:6.3f}x  target {sign} {limit}x  {'pass' if ok else 'MISS'}")
    return ok


@dataclass
class Figures:
    c1: dict[str, float]
    c16: dict[str, float]


def measure(
    name: str,
    url: str,
    pids: dict[str, int],
    batches: tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]],
    c: int,
    profile_dir: Path | None,
) -> Figures:
    """Warm up, then c1 and c16 runs of ``batches`` (warm, ones, many); CPU per request of each
    process in ``pids`` around the c16 run (and its py-spy profile into ``profile_dir``)."""
    warm, ones, many = batches
    asyncio.run(load(url, warm, c))  # connections, caches, first imports
    c1 = report(f"{name}, c1", asyncio.run(load(url, ones, 1)))
    profiler = None if profile_dir is None else Profiler(profile_dir, pids)
    cpu_before = {n: cpu_seconds(pid) for n, pid in pids.items()}
    started = time.perf_counter()
    c16_run = asyncio.run(load(url, many, c))
    seconds = time.perf_counter() - started
    cpu = {n: cpu_seconds(pid) - cpu_before[n] for n, pid in pids.items()}
    if profiler is not None:
        profiler.stop()
        for n in pids:
            print(summarise(profiler.out_dir / f"{n}.txt", seconds))
    c16 = report(f"{name}, c{c}", c16_run)
    per = "  ".join(f"{n} {t / len(many) * 1000:.1f}" for n, t in cpu.items())
    total = sum(cpu.values()) / len(many) * 1000
    print(f"    CPU ms per request at c{c}: {per}  (all {total:.1f})")
    c16["cpu_ms"] = total
    return Figures(c1, c16)


class MeshBench:
    """One mesh (SQLite files, or one PostgreSQL database) with its own seeded orders."""

    def __init__(self, args: argparse.Namespace, database_url: str | None) -> None:
        from accord.cli.mesh import free_ports, start_mesh
        from accord.protocol.auth import mint_token

        self.args = args
        self.store = "PostgreSQL" if database_url else "SQLite"
        self.data_dir = Path(tempfile.mkdtemp(prefix="accord-bench-"))
        env = {"ACCORD_DATA_DIR": str(self.data_dir)}
        if database_url:
            env["ACCORD_DATABASE_URL"] = database_url
        self.mesh = start_mesh(self.data_dir, ports=free_ports(), env=env)

        def database(service: str) -> str:
            if database_url:
                return database_url.replace("postgresql://", "postgresql+asyncpg://", 1)
            return f"sqlite+aiosqlite:///{self.data_dir / f'{service}.db'}"

        count = args.concurrency + args.c1_requests + args.requests
        pairs = asyncio.run(seed_orders(database, count))
        self.requests = [
            (mint_token(cid, ["customer"]), f"wrong size, please refund order {oid}")
            for oid, cid in pairs
        ]

    def run(self, profile_dir: Path | None) -> Figures:
        c = self.args.concurrency
        warm, rest = self.requests[:c], self.requests[c:]
        ones, many = rest[: self.args.c1_requests], rest[self.args.c1_requests :]
        pids = {name: proc.pid for name, proc in self.mesh.processes.items()}
        return measure(
            f"refund, {self.store}",
            self.mesh.url("orchestrator"),
            pids,
            (warm, ones, many),
            c,
            None if profile_dir is None else profile_dir / self.store.lower(),
        )

    def stop(self) -> None:
        self.mesh.stop()


def echo_baseline(c: int, echo_requests: int) -> tuple[dict[str, float], dict[str, float]]:
    """The echo agent's figures at c1 and at ``c`` (with its CPU per request), measured in its
    own process, which is stopped before anything else is measured."""
    from accord.cli.mesh import free_ports
    from accord.protocol.auth import mint_token

    echo_port = free_ports(("echo",))["echo"]
    echo_env = {**os.environ, "ACCORD_DATA_DIR": str(Path(os.environ["ACCORD_DATA_DIR"]) / "echo")}
    echo = subprocess.Popen(
        [sys.executable, __file__, "--serve-echo", str(echo_port)],
        env=echo_env,
        start_new_session=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{echo_port}/healthz", echo)
        echo_url = f"http://127.0.0.1:{echo_port}"
        asks = [(mint_token("C-01", ["customer"]), "echo")]
        asyncio.run(load(echo_url, asks * 32, c))  # warm up
        base1 = report("baseline: A2A echo agent, c1", asyncio.run(load(echo_url, asks * 32, 1)))
        echo_cpu = cpu_seconds(echo.pid)
        base = report(
            f"baseline: A2A echo agent, c{c}",
            asyncio.run(load(echo_url, asks * echo_requests, c)),
        )
        base["cpu_ms"] = (cpu_seconds(echo.pid) - echo_cpu) / echo_requests * 1000
        print(f"    CPU ms per echo at c{c}: {base['cpu_ms']:.1f}")
        return base1, base
    finally:
        _stop(echo)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=64, help="refunds at full concurrency")
    parser.add_argument("--c1-requests", type=int, default=16, help="refunds one at a time")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--echo-requests", type=int, default=160)
    parser.add_argument(
        "--postgres", action="store_true", help="also run the mesh on PostgreSQL and compare"
    )
    parser.add_argument(
        "--profile", type=Path, default=None, help="py-spy profiles of each service into DIR"
    )
    parser.add_argument(
        "--no-floor", action="store_true", help="skip the floor mesh (bench/hop_floor.py)"
    )
    parser.add_argument("--serve-echo", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        serve_echo(args.serve_echo)
        return

    base_dir = Path(tempfile.mkdtemp(prefix="accord-bench-"))
    os.environ["ACCORD_DATA_DIR"] = str(base_dir)
    # One secret for the meshes, the echo agent and the tokens minted here.
    os.environ["ACCORD_JWT_SECRET"] = secrets.token_urlsafe(32)
    # A benchmark is one caller at full speed: the per-caller rate limit would measure itself.
    os.environ["ACCORD_RATE_LIMIT_PER_S"] = "0"

    c = args.concurrency
    print(f"concurrency 1 and {c}, {os.cpu_count()} CPUs")
    base1, base = echo_baseline(c, args.echo_requests)
    with contextlib.ExitStack() as stack:
        floor = None
        if not args.no_floor:
            from hop_floor import measure_floor

            floor = measure_floor(
                "refund",
                c,
                args.c1_requests,
                args.requests,
                None if args.profile is None else args.profile / "floor",
            )
        sqlite = MeshBench(args, None)
        stack.callback(sqlite.stop)
        lite = sqlite.run(args.profile)
        print("targets (ratios in this run):")
        target(
            f"SQLite throughput c{c} / echo", lite.c16["rate"] / base["rate"], 0.25, at_least=True
        )
        target("SQLite p50 c1 / echo p50 c1", lite.c1["p50"] / base1["p50"], 4, at_least=False)
        target(f"SQLite p99 c{c} / its p50", lite.c16["p99"] / lite.c16["p50"], 3, at_least=False)
        # Not a target: the load-independent figure on a shared machine (CPU, not wall time).
        print(f"  SQLite CPU per refund / per echo: {lite.c16['cpu_ms'] / base['cpu_ms']:.1f}x")
        if floor is not None:
            print("what a refund costs over its hops (the floor: the same messages, no work):")
            print(
                f"  floor throughput c{c} / echo {floor.c16['rate'] / base['rate']:.3f}x, "
                f"p50 c1 / echo {floor.c1['p50'] / base1['p50']:.2f}x, "
                f"CPU / echo {floor.c16['cpu_ms'] / base['cpu_ms']:.1f}x"
            )
            print(
                f"  refund / floor: throughput c{c} {lite.c16['rate'] / floor.c16['rate']:.2f}x, "
                f"p50 c1 {lite.c1['p50'] / floor.c1['p50']:.2f}x, "
                f"CPU {lite.c16['cpu_ms'] / floor.c16['cpu_ms']:.2f}x"
            )
        if args.postgres:
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
            from tests.support.postgres import private_cluster

            server = stack.enter_context(private_cluster())
            pg = MeshBench(args, server)
            stack.callback(pg.stop)
            post = pg.run(args.profile)
            target(
                f"PostgreSQL throughput c{c} / SQLite",
                post.c16["rate"] / lite.c16["rate"],
                0.5,
                at_least=True,
            )
            print(
                f"  PostgreSQL p50 c1 / SQLite: {post.c1['p50'] / lite.c1['p50']:.2f}x, "
                f"p99 c{c} / SQLite: {post.c16['p99'] / lite.c16['p99']:.2f}x"
            )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
