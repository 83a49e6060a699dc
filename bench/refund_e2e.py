"""End-to-end refunds through all five services, against a bare A2A round trip.

    .venv/bin/python bench/refund_e2e.py [--requests 48] [--concurrency 16]

Starts the mesh (five processes, SQLite, a fresh temporary data directory, free ports) and
seeds extra delivered orders for customer C-01 (bench only: rows written with the tool
servers' own table definitions), so that every request is a distinct order and a real
refunds.issue write (key refund:<order>). Each request is a customer's first message,
streamed: intake -> orders.lookup + policy-check + risk-check in parallel -> decide ->
refunds.get + refunds.issue. The baseline, in the same run on the same machine: a bare echo
agent with the same contract, gate and durable task store but no workflow and no children,
at the same concurrency.
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
from datetime import UTC, datetime, timedelta
from pathlib import Path

FIRST_ORDER = 5000
AMOUNT_CENTS = 1999


def seed_orders(data_dir: Path, count: int) -> list[str]:
    """Extra delivered, refundable orders of C-01 in commerce's and payments' databases."""
    from sqlalchemy import create_engine

    from accord.tools.commerce_store import order_items, orders
    from accord.tools.ledger import ledger_orders

    now = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    ids = [f"O-{FIRST_ORDER + i}" for i in range(count)]
    commerce = create_engine(f"sqlite:///{data_dir / 'commerce.db'}")
    with commerce.begin() as conn:
        conn.execute(
            orders.insert(),
            [
                {
                    "order_id": oid,
                    "customer_id": "C-01",
                    "status": "delivered",
                    "currency": "USD",
                    "ordered_at": now - timedelta(days=5),
                    "delivered_at": now - timedelta(days=3),
                }
                for oid in ids
            ],
        )
        conn.execute(
            order_items.insert(),
            [
                {
                    "order_id": oid,
                    "line": 1,
                    "sku": "BEN-001",
                    "name": "Bench socks",
                    "quantity": 1,
                    "unit_price_cents": AMOUNT_CENTS,
                    "category": "apparel",
                    "final_sale": False,
                }
                for oid in ids
            ],
        )
    payments = create_engine(f"sqlite:///{data_dir / 'payments.db'}")
    with payments.begin() as conn:
        conn.execute(
            ledger_orders.insert(),
            [
                {
                    "order_id": oid,
                    "customer_id": "C-01",
                    "currency": "USD",
                    "total_cents": AMOUNT_CENTS,
                }
                for oid in ids
            ],
        )
    return ids


def serve_echo(port: int) -> None:
    """The baseline agent: the orchestrator's contract, an executor that answers at once."""
    import uvicorn

    from accord.contracts.agents import agent_contract
    from accord.protocol.a2a.executor import Completed, ContractExecutor, NeedsInput, Progress, Turn
    from accord.protocol.a2a.server import build_agent_app
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


async def load(
    url: str, token: str, texts: list[str], concurrency: int
) -> tuple[float, list[float], int]:
    """Send every text as a new task, ``concurrency`` at a time; (wall s, latencies, failures)."""
    import httpx

    from accord.contracts.status import Status
    from accord.protocol.a2a.client import A2AClient

    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=120.0), limits=limits) as http:
        client = await A2AClient.connect(url, token=token, http=http)
        queue: asyncio.Queue[str] = asyncio.Queue()
        for text in texts:
            queue.put_nowait(text)
        latencies: list[float] = []
        failures = 0

        async def worker() -> None:
            nonlocal failures
            while not queue.empty():
                text = queue.get_nowait()
                started = time.perf_counter()
                view = await client.send(text=text, skill="refund.request")
                latencies.append(time.perf_counter() - started)
                if view.status is not Status.COMPLETED:
                    failures += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies, failures


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
    rank = max(1, round(p / 100 * len(ordered) + 0.5))  # nearest rank
    return ordered[min(rank, len(ordered)) - 1]


def report(name: str, wall: float, lat: list[float], failures: int) -> dict[str, float]:
    rate = len(lat) / wall
    p50, p99 = pct(lat, 50) * 1000, pct(lat, 99) * 1000
    print(
        f"{name:<28} {len(lat):>5} req  {rate:8.1f}/s  p50 {p50:8.1f} ms  p99 {p99:8.1f} ms"
        f"  mean {statistics.mean(lat) * 1000:8.1f} ms  failed {failures}"
    )
    return {"rate": rate, "p50": p50, "p99": p99}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--echo-requests", type=int, default=160)
    parser.add_argument("--serve-echo", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        serve_echo(args.serve_echo)
        return

    data_dir = Path(tempfile.mkdtemp(prefix="accord-bench-"))
    os.environ["ACCORD_DATA_DIR"] = str(data_dir)
    # One secret for the mesh, the echo agent and the tokens minted here.
    os.environ["ACCORD_JWT_SECRET"] = secrets.token_urlsafe(32)
    # A benchmark is one caller at full speed: the per-caller rate limit would measure itself.
    os.environ["ACCORD_RATE_LIMIT_PER_S"] = "0"
    from accord.agents.cli.mesh import free_ports, start_mesh
    from accord.protocol.auth import mint_token

    mesh = start_mesh(data_dir, ports=free_ports())
    echo_port = free_ports(("echo",))["echo"]
    echo_env = {**os.environ, "ACCORD_DATA_DIR": str(data_dir / "echo")}
    echo = subprocess.Popen(
        [sys.executable, __file__, "--serve-echo", str(echo_port)],
        env=echo_env,
        start_new_session=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{echo_port}/healthz", echo)
        orders = seed_orders(data_dir, args.requests + args.concurrency)
        token = mint_token("C-01", ["customer"])
        texts = [f"wrong size, please refund order {oid}" for oid in orders]
        print(
            f"mesh of five processes, SQLite, concurrency {args.concurrency}, {os.cpu_count()} CPUs"
        )
        # Warm up both (connections, caches, first imports), then measure.
        asyncio.run(
            load(mesh.url("orchestrator"), token, texts[: args.concurrency], args.concurrency)
        )
        asyncio.run(load(f"http://127.0.0.1:{echo_port}", token, ["warm"] * 32, args.concurrency))
        base = report(
            "baseline: A2A echo agent",
            *asyncio.run(
                load(
                    f"http://127.0.0.1:{echo_port}",
                    token,
                    ["echo"] * args.echo_requests,
                    args.concurrency,
                )
            ),
        )
        e2e = report(
            "refund end to end (5 svcs)",
            *asyncio.run(
                load(mesh.url("orchestrator"), token, texts[args.concurrency :], args.concurrency)
            ),
        )
        print(
            f"ratio refund/echo: throughput {e2e['rate'] / base['rate']:.3f}x, "
            f"p50 {e2e['p50'] / base['p50']:.1f}x, p99 {e2e['p99'] / base['p99']:.1f}x"
        )
    finally:
        if echo.poll() is None:
            echo.terminate()
            echo.wait(timeout=10)
        mesh.stop()


if __name__ == "__main__":
    main()
