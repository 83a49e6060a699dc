"""Durable A2A task store vs a2a-sdk's in-memory store and its SQLite DatabaseTaskStore.

Each store backs the same trivial ContractExecutor agent, built by build_agent_app (gate,
contract checks and all), served by a real uvicorn process; the client sends non-streaming
JSON-RPC SendMessage at a fixed concurrency and counts tasks that come back COMPLETED. The
figure is tasks/s, printed as a ratio to the in-memory store measured in the same run.

The three servers run side by side and short load windows alternate between them (memory,
sdk, accord, memory, ...), so a machine whose load changes during the run treats them alike;
each store's figure is its total over all its windows. a2a-sdk's own OpenTelemetry spans are
switched off in all three (OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false): they cost the same
everywhere.
Beside wall-clock throughput, the server process's CPU time per task is read from /proc (all
its threads, so the SQLite writer thread counts): on a busy machine, CPU per task is the steadier
figure, and its inverse ratio is printed too.

    .venv/bin/python bench/a2a_store.py [--seconds 1] [--rounds 8] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from accord.contracts.agents import AgentContract
from accord.protocol.a2a import Completed, ContractExecutor, NeedsInput, Progress, Turn

KINDS = ("memory", "sdk-sqlite", "accord-sqlite")
CONTRACT = AgentContract.model_validate(
    {
        "name": "bench-agent",
        "version": "1.0.0",
        "description": "Answers at once.",
        "default_port": 8798,
        "skills": [
            {
                "id": "noop",
                "name": "No-op",
                "description": "Completes immediately.",
                "tags": ["bench"],
                "input_schema": {"type": "object"},
                "output_schema": {"type": "object"},
            }
        ],
    }
)


class Trivial(ContractExecutor):
    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        return Completed({"ok": True})


def serve(kind: str, port: int, db: Path) -> None:
    import uvicorn
    from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore
    from a2a.server.tasks.task_store import TaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    from accord.protocol.a2a.server import build_agent_app
    from accord.protocol.settings import ServeOptions

    store: TaskStore | None = None
    if kind == "memory":
        store = InMemoryTaskStore()
    elif kind == "sdk-sqlite":
        store = DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{db}"))
    options = ServeOptions(port=port, database_url=f"sqlite:///{db}")
    app = build_agent_app(
        CONTRACT, Trivial(CONTRACT), options, service_name="bench", task_store=store
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


async def load(
    url: str, token: str, seconds: float, concurrency: int, warm_s: float = 0.0
) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    latencies: list[float] = []
    failures = 0

    async def one(client: httpx.AsyncClient) -> None:
        nonlocal failures
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": uuid.uuid4().hex,
                    "role": "ROLE_USER",
                    "parts": [{"data": {"n": 1}}],
                }
            },
        }
        started = time.perf_counter()
        r = await client.post("/", json=body, headers=headers)
        state = r.json().get("result", {}).get("task", {}).get("status", {}).get("state")
        if state == "TASK_STATE_COMPLETED":
            latencies.append(time.perf_counter() - started)
        else:
            failures += 1

    async def worker(client: httpx.AsyncClient, until: float) -> None:
        while time.perf_counter() < until:
            await one(client)

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30.0) as client:
        if warm_s:
            warm = time.perf_counter() + warm_s
            await asyncio.gather(*(worker(client, warm) for _ in range(concurrency)))
            latencies.clear()
            failures = 0
        started = time.perf_counter()
        until = started + seconds
        await asyncio.gather(*(worker(client, until) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {
        "rate": len(latencies) / elapsed,
        "done": float(len(latencies)),
        "elapsed": elapsed,
        "p50_ms": statistics.median(ordered) * 1000 if ordered else 0.0,
        "p99_ms": ordered[int(len(ordered) * 0.99) - 1] * 1000 if ordered else 0.0,
        "failures": float(failures),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and all its threads, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_ready(url: str, proc: subprocess.Popen[bytes], deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError("bench server exited")
        try:
            if httpx.get(url + "/readyz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)  # poll interval, bounded by the deadline
    raise TimeoutError(url)


def start_server(kind: str, tmp: Path) -> tuple[str, subprocess.Popen[bytes]]:
    from tests.support.processes import free_port  # reuse the tests' port picker

    port = free_port()
    db = tmp / f"{kind}.db"
    cmd = [sys.executable, __file__, "--serve", kind, "--port", str(port), "--db", str(db)]
    env = {**os.environ, "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "false"}
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    return f"http://127.0.0.1:{port}", proc


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--serve", choices=KINDS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.db)
        return
    from accord.protocol.auth import mint_token

    windows: dict[str, list[dict[str, float]]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ACCORD_DATA_DIR"] = tmp  # one JWT secret for client and servers
        # One caller at full speed: the per-caller rate limit would measure itself.
        os.environ["ACCORD_RATE_LIMIT_PER_S"] = "0"
        token = mint_token("bench", ["customer"])
        servers = {kind: start_server(kind, Path(tmp)) for kind in KINDS}
        try:
            for url, proc in servers.values():
                wait_ready(url, proc)
                asyncio.run(load(url, token, 1.0, args.concurrency))  # warm-up
            for _ in range(args.rounds):
                for kind, (url, proc) in servers.items():
                    cpu = cpu_seconds(proc.pid)
                    result = asyncio.run(load(url, token, args.seconds, args.concurrency))
                    result["cpu"] = cpu_seconds(proc.pid) - cpu
                    windows[kind].append(result)
        finally:
            for _url, proc in servers.values():
                proc.terminate()
                proc.wait(timeout=15)
    totals: dict[str, dict[str, float]] = {}
    for kind, ws in windows.items():
        done = sum(w["done"] for w in ws)
        totals[kind] = {
            "rate": done / sum(w["elapsed"] for w in ws),
            "cpu_ms": sum(w["cpu"] for w in ws) * 1000 / max(done, 1.0),
            "p50_ms": statistics.median(w["p50_ms"] for w in ws),
            "p99_ms": max(w["p99_ms"] for w in ws),
            "failures": sum(w["failures"] for w in ws),
        }
    base = totals["memory"]
    print(
        f"A2A SendMessage, non-streaming, concurrency {args.concurrency}, real uvicorn, "
        f"{args.rounds} alternating {args.seconds:g} s windows per store"
    )
    for kind, r in totals.items():
        print(
            f"  {kind:14s} {r['rate']:7.1f} tasks/s  ratio {r['rate'] / base['rate']:5.2f}  "
            f"p50 {r['p50_ms']:6.1f} ms  p99 {r['p99_ms']:7.1f} ms  "
            f"server CPU {r['cpu_ms']:6.2f} ms/task (ratio {base['cpu_ms'] / r['cpu_ms']:4.2f})  "
            f"failures {r['failures']:.0f}"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
