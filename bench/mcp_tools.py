"""MCP tool servers: tools/call throughput and latency against a bare echo tool, same run.

Three real uvicorn processes on 127.0.0.1, each measured alone at concurrency 16 for a few
seconds: an echo tool on the same server framework (contract-declared, stateless JSON, no
database), ``orders.lookup`` on the commerce server (which reads the order's refunds from the
payments ledger, ``refunds.list``, on every call: two hops, the second through the MCP client)
and ``refunds.issue`` (a new idempotency key per call, durable on SQLite) on the payments
server. The load client is a minimal keep-alive
HTTP/1.1 client on asyncio streams, so that the client, which shares the machine's cores with
the server, costs as little as possible. Targets: lookup >= 0.8x echo, issue >= 0.5x echo.

    .venv/bin/python bench/mcp_tools.py [--seconds 3] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import jwt

from accord.contracts.envelope import Tenant
from accord.contracts.tool_access import ToolDelegation
from accord.protocol.auth import token_claims
from accord.protocol.service_keys import ALGORITHM, ensure_ring

ROOT = Path(__file__).resolve().parent.parent
ECHO = "bench.echo"


# -- the echo server (run in its own process by this same script) ------------------------------
def serve_echo(port: int) -> None:
    import uvicorn

    from accord.contracts.tools import IdempotencyKey, SideEffect, ToolContract
    from accord.protocol.mcp.server import CallContext, ToolServer, build_http_app, tool

    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["text"],
        "properties": {"text": {"type": "string", "maxLength": 1000}},
    }
    contract = ToolContract(
        name=ECHO,
        version="1.0.0",
        title="Echo",
        description="Echo text.",
        side_effect=SideEffect.NONE,
        idempotency_key=IdempotencyKey.NONE,
        input_schema=schema,
        output_schema=schema,
    )

    async def echo(args: dict[str, Any], _ctx: CallContext) -> dict[str, Any]:
        return {"text": args["text"]}

    app = build_http_app(ToolServer("bench-echo", "1.0.0", [tool(contract, echo)]))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


# -- processes ---------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def process(args: list[str], env: dict[str, str]) -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, *args, "--port", str(port)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{args} exited with {proc.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise TimeoutError(f"{args} did not become healthy")
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)


# -- the load client ---------------------------------------------------------------------------
GRANTS = ("orders.lookup", "refunds.issue")


def acting_for(args: dict[str, Any]) -> dict[str, Any]:
    """The call's ``_meta``: the delegation of the customer its arguments name (a service's
    calls say for whom they are made); none for the echo tool, whose contract has no access."""
    customer = args.get("customer_id")
    if not isinstance(customer, str):
        return {}
    tenant = Tenant(app="accord", user=customer, session="bench")
    return ToolDelegation(tenant=tenant).to_meta()


class Conn:
    """One keep-alive HTTP/1.1 connection posting JSON-RPC to /mcp, with a bearer token (tool
    servers refuse calls without a verified principal)."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.token = token
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def post(self, body: bytes) -> bytes:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Authorization: Bearer {self.token}\r\n"
            f"Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        headers = await self.reader.readuntil(b"\r\n\r\n")
        status = int(headers[9:12])
        length = 0
        for line in headers.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        payload = await self.reader.readexactly(length)
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {payload[:200]!r}")
        return payload


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.elapsed = 0.0

    def summary(self) -> dict[str, float]:
        lat = sorted(self.latencies)

        def pct(p: float) -> float:
            return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000

        return {
            "calls": len(lat),
            "rps": len(lat) / self.elapsed,
            "p50": pct(0.50),
            "p99": pct(0.99),
            "errors": self.errors,
        }


async def measure(
    port: int,
    token: str,
    make_args: Callable[[int], tuple[str, dict[str, Any]]],
    seconds: float,
    concurrency: int,
    counter: Iterator[int],
    stats: Stats | None,
) -> None:
    """Drive one server with ``concurrency`` keep-alive connections for ``seconds``."""

    async def worker(stop_at: float) -> None:
        conn = Conn(port, token)
        await conn.open()
        try:
            while time.perf_counter() < stop_at:
                n = next(counter)
                name, args = make_args(n)
                body = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": n,
                        "method": "tools/call",
                        "params": {"name": name, "arguments": args, "_meta": acting_for(args)},
                    }
                ).encode()
                t0 = time.perf_counter()
                reply = json.loads(await conn.post(body))
                if stats is not None:
                    stats.latencies.append(time.perf_counter() - t0)
                    if "error" in reply or reply["result"].get("isError"):
                        stats.errors += 1
        finally:
            conn.writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker(start + seconds) for _ in range(concurrency)))
    if stats is not None:
        stats.elapsed += time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.serve_echo:
        serve_echo(opts.port)
        return

    data = tempfile.mkdtemp(prefix="accord-bench-mcp-")
    env = {k: v for k, v in os.environ.items() if k not in ("ACCORD_DATABASE_URL", "ACCORD_FAULTS")}
    env["ACCORD_DATA_DIR"] = data
    env["ACCORD_JWT_SECRET"] = os.urandom(32).hex()  # this run's servers
    # Services sign their own tokens (issue #30): this run calls as the orchestrator, with its
    # key in this run's keys folder, which the servers trust through the shipped trust table.
    env["ACCORD_KEYS_DIR"] = keys = os.path.join(data, "keys")
    env.pop("ACCORD_SERVICE_TRUST", None)
    ring, _made = ensure_ring("orchestrator", Path(keys))
    signer = ring.signer()
    token = jwt.encode(
        token_claims("svc:orchestrator", ["service"], scopes=GRANTS),
        signer.private_key(),
        algorithm=ALGORITHM,
        headers={"kid": signer.kid},
    )
    serve = ["-m", "accord.cli.main", "serve"]
    run = "bench-" + os.urandom(3).hex()

    def echo(n: int) -> tuple[str, dict[str, Any]]:
        return ECHO, {"text": f"hello {n}"}

    def lookup(n: int) -> tuple[str, dict[str, Any]]:
        return "orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"}

    def issue(n: int) -> tuple[str, dict[str, Any]]:
        # 1 cent of the 129900-cent order per call: thousands of distinct refunds fit.
        return "refunds.issue", {
            "idempotency_key": f"{run}:{n}",
            "order_id": "O-1004",
            "customer_id": "C-03",
            "amount_cents": 1,
            "reason": "bench",
        }

    plan = [
        ("echo", [__file__, "--serve-echo"], echo),
        ("orders.lookup", [*serve, "commerce"], lookup),
        ("refunds.issue", [*serve, "payments"], issue),
    ]
    stats = {label: Stats() for label, _, _ in plan}
    counter = itertools.count()
    # All three servers run at once and are measured in alternating short rounds, so that a
    # burst of load from elsewhere on the machine lands on every figure alike.
    rounds = max(1, round(opts.seconds / 0.5))
    with ExitStack() as stack:
        ports: dict[str, int] = {}
        # payments first: commerce answers a lookup with the ledger's refunds of the order,
        # read from payments (refunds.list) on every call, so it is started pointing there.
        for label, args, _ in reversed(plan):
            own = dict(env)
            if label == "orders.lookup":
                own["ACCORD_PAYMENTS_URL"] = f"http://127.0.0.1:{ports['refunds.issue']}"
            ports[label] = stack.enter_context(process(args, own))

        async def drive() -> None:
            for label, _, make in plan:  # warm-up, not recorded
                await measure(ports[label], token, make, 0.3, opts.concurrency, counter, None)
            for _ in range(rounds):
                for label, _, make in plan:
                    await measure(
                        ports[label],
                        token,
                        make,
                        opts.seconds / rounds,
                        opts.concurrency,
                        counter,
                        stats[label],
                    )

        asyncio.run(drive())
    results = {label: s.summary() for label, s in stats.items()}

    base = results["echo"]["rps"]
    targets = {"echo": None, "orders.lookup": 0.8, "refunds.issue": 0.5}
    print(
        f"MCP tools/call, stateless JSON, c={opts.concurrency}, {opts.seconds:g}s each "
        f"(one uvicorn worker per server, {os.cpu_count()} cores shared with the client)"
    )
    print(
        f"{'tool':<15}{'calls/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'vs echo':>9}"
        f"{'target':>8}"
    )
    for label, r in results.items():
        target = targets[label]
        print(
            f"{label:<15}{r['rps']:>10.0f}{r['p50']:>9.2f}{r['p99']:>9.2f}{r['errors']:>8.0f}"
            f"{r['rps'] / base:>8.2f}x{'' if target is None else f'{target:>7.1f}x':>8}"
        )


if __name__ == "__main__":
    main()
