"""Soak: mixed traffic against the whole mesh, counting errors by code and watching memory.

    .venv/bin/python bench/soak.py [--seconds 60] [--concurrency 64]

Starts the mesh (five processes, SQLite, a fresh data directory, the default limits: this is
how a deployment runs) and seeds refundable orders. ``--concurrency`` workers then loop for
``--seconds``, each picking one operation at random: a refund (a customer's first message), an
approval round (a refund that needs an approver, then the approver's decision), a task listing,
an order lookup straight on commerce (a customer may read their own orders), a cancel (a
conversation left waiting, then canceled) and a malformed request to a random service (from the
fuzz suite's mutations). Several customers share the traffic, as they would.

Printed per service: answers by contract code (or OK), and RSS at start, middle and end. Target
(issue #14): no errors but the intended RATE_LIMITED and the malformed requests' refusals, and
memory at the end no more than 1.2x the middle.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import secrets
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fuzz suite's mutations live under tests/

SERVICES = ("orchestrator", "policy", "risk", "commerce", "payments")
CUSTOMERS = 8


def _e2e() -> Any:
    """bench/refund_e2e.py, for its order seeding (one place that writes bench orders)."""
    spec = importlib.util.spec_from_file_location("refund_e2e", ROOT / "bench" / "refund_e2e.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Soak:
    def __init__(self, mesh: Any, orders: list[str], seed: int) -> None:
        from accord.protocol.auth import mint_token

        self.mesh = mesh
        self.orders = orders
        self.rnd = random.Random(seed)
        self.counts: dict[str, Counter[str]] = {s: Counter() for s in SERVICES}
        self.customer = mint_token("C-01", ["customer"])
        self.approver = mint_token("approver-1", ["approver"])
        self.laptop_owner = mint_token("C-03", ["customer"])  # O-1004 always needs an approver
        self.others = [mint_token(f"C-{90 + i}", ["customer"]) for i in range(CUSTOMERS)]
        self.examples: dict[str, str] = {}  # one message per unexpected code, for the report

    def note(self, service: str, outcome: str, why: str = "") -> None:
        self.counts[service][outcome] += 1
        if why and outcome not in ("OK", "RATE_LIMITED") and outcome not in self.examples:
            self.examples[outcome] = why[:300]

    async def refund(self, client: Any) -> None:
        from accord.contracts.errors import AccordError

        order = self.orders.pop() if self.orders else "O-1001"
        try:
            view = await client.send(
                text=f"wrong size, refund order {order}", skill="refund.request"
            )
            self.note("orchestrator", view.error.code.value if view.error else "OK")
        except AccordError as error:
            self.note("orchestrator", error.code.value)

    async def approval(self, customer: Any, approver: Any) -> None:
        from accord.contracts.errors import AccordError

        try:
            view = await customer.send(
                text="I changed my mind, refund order O-1004", skill="refund.request"
            )
            data = {"task_id": view.task_id, "decision": "reject", "note": "soak"}
            decided = await approver.send(data=data, skill="refund.approve")
            code = decided.error.code.value if decided.error else "OK"
            why = decided.error.message if decided.error else ""
            self.note("orchestrator", code, f"approval: {why}")
        except AccordError as error:
            self.note("orchestrator", error.code.value, f"approval: {error.message}")

    async def listing(self, client: Any) -> None:
        from accord.contracts.errors import AccordError

        try:
            await client.list_tasks(page_size=20)
            self.note("orchestrator", "OK")
        except AccordError as error:
            self.note("orchestrator", error.code.value)

    async def cancel(self, client: Any) -> None:
        from accord.contracts.errors import AccordError

        try:
            view = await client.send(text="我想退款", skill="refund.request")
            await client.cancel(view.task_id)
            self.note("orchestrator", "OK")
        except AccordError as error:
            self.note("orchestrator", error.code.value, f"cancel: {error.message}")

    async def lookup(self, http: Any) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "orders.lookup",
                "arguments": {"order_id": "O-1002", "customer_id": "C-01"},
            },
        }
        headers = {
            "Authorization": f"Bearer {self.customer}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        r = await http.post(self.mesh.url("commerce") + "/mcp", json=body, headers=headers)
        self.note("commerce", _outcome(r))

    async def malformed(self, http: Any) -> None:
        from tests.hostile.fuzz.mutate import mutate
        from tests.hostile.fuzz.targets import a2a_seed, mcp_seed

        service = self.rnd.choice(SERVICES)
        seed = (
            mcp_seed(service, self.rnd)
            if service in ("commerce", "payments")
            else a2a_seed(service, self.rnd)
        )
        _, body, extra = mutate(seed.body, self.rnd)
        headers = {
            "Authorization": f"Bearer {self.rnd.choice(self.others)}",
            "Content-Type": "application/json",
        }
        headers.update(
            {"Accept": "application/json, text/event-stream"}
            if seed.wire == "mcp"
            else {"A2A-Version": "1.0"}
        )
        headers.update(extra)
        r = await http.request(
            seed.method, self.mesh.url(service) + seed.path, content=body, headers=headers
        )
        self.note(service, "malformed:" + _outcome(r))


def _outcome(response: Any) -> str:
    from accord.contracts.errors import AccordError

    if response.status_code >= 500:
        return f"HTTP {response.status_code}"
    try:
        body = response.json()
    except ValueError:
        return "OK" if response.status_code < 400 else f"HTTP {response.status_code}"
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        if "jsonrpc" in body:
            return AccordError.from_jsonrpc_error(error).code.value
        if isinstance(error.get("code"), int):  # A2A REST: google.rpc.Status with ErrorInfo
            return AccordError.from_rest(response.status_code, body).code.value
        return AccordError.from_http(response.status_code, body).code.value
    result = body.get("result") if isinstance(body, dict) else None
    if isinstance(result, dict) and result.get("isError"):
        return AccordError.from_mcp_result(result).code.value
    return "OK"


async def run(soak: Soak, seconds: float, concurrency: int) -> dict[str, list[float]]:
    import httpx

    from accord.protocol.a2a.client import A2AClient

    rss: dict[str, list[float]] = {s: [rss_mb(p.pid)] for s, p in soak.mesh.processes.items()}
    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=120.0), limits=limits) as http:
        url = soak.mesh.url("orchestrator")
        customers = [await A2AClient.connect(url, token=t, http=http) for t in soak.others]
        main = await A2AClient.connect(url, token=soak.customer, http=http)
        approver = await A2AClient.connect(url, token=soak.approver, http=http)
        laptop = await A2AClient.connect(url, token=soak.laptop_owner, http=http)
        end = time.monotonic() + seconds
        middle = time.monotonic() + seconds / 2

        async def worker() -> None:
            while time.monotonic() < end:
                pick = soak.rnd.random()
                if pick < 0.3:
                    await soak.refund(main)
                elif pick < 0.4:
                    await soak.approval(laptop, approver)
                elif pick < 0.55:
                    await soak.listing(soak.rnd.choice(customers))
                elif pick < 0.7:
                    await soak.lookup(http)
                elif pick < 0.8:
                    await soak.cancel(soak.rnd.choice(customers))
                else:
                    await soak.malformed(http)

        async def sample_middle() -> None:
            await asyncio.sleep(max(0.0, middle - time.monotonic()))
            for s, p in soak.mesh.processes.items():
                rss[s].append(rss_mb(p.pid))

        await asyncio.gather(sample_middle(), *(worker() for _ in range(concurrency)))
    for s, p in soak.mesh.processes.items():
        rss[s].append(rss_mb(p.pid))
    return rss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--orders", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    data_dir = Path(tempfile.mkdtemp(prefix="accord-soak-"))
    os.environ["ACCORD_DATA_DIR"] = str(data_dir)
    os.environ["ACCORD_JWT_SECRET"] = secrets.token_urlsafe(32)
    from accord.cli.mesh import free_ports, start_mesh

    mesh = start_mesh(data_dir, ports=free_ports())
    try:
        orders = _e2e().seed_orders(data_dir, args.orders)
        cpus = os.cpu_count()
        print(
            f"soak: {args.seconds:.0f} s, concurrency {args.concurrency}, seed {seed}, {cpus} CPUs"
        )
        soak = Soak(mesh, orders, seed)
        rss = asyncio.run(run(soak, args.seconds, args.concurrency))
    finally:
        mesh.stop()
    worst = 0.0
    for service in SERVICES:
        start, middle, end = rss[service]
        growth = end / middle if middle else 0.0
        worst = max(worst, growth)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(soak.counts[service].items()))
        memory = f"RSS {start:6.1f} / {middle:6.1f} / {end:6.1f} MB (end/middle {growth:4.2f}x)"
        print(f"{service:<13} {memory}  {counts or '-'}")
    unexpected = {
        s: {
            k: v
            for k, v in c.items()
            if k != "OK" and not k.startswith("malformed:") and k != "RATE_LIMITED"
        }
        for s, c in soak.counts.items()
    }
    unexpected = {s: c for s, c in unexpected.items() if c}
    bad_malformed = {
        s: {
            k: v
            for k, v in c.items()
            if k.startswith("malformed:HTTP 5") or k == "malformed:INTERNAL"
        }
        for s, c in soak.counts.items()
    }
    bad_malformed = {s: c for s, c in bad_malformed.items() if c}
    print(f"memory end/middle worst {worst:.2f}x (target <= 1.2x)")
    print(f"unexpected errors: {json.dumps(unexpected) if unexpected else 'none'}")
    for code, why in sorted(soak.examples.items()):
        if not code.startswith("malformed:"):
            print(f"  e.g. {code}: {why}")
    shown = json.dumps(bad_malformed) if bad_malformed else "none"
    print(f"malformed requests answered 5xx/INTERNAL: {shown}")


if __name__ == "__main__":
    main()
