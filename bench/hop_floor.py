"""The refund's hops with no work behind them: what its topology costs on these frameworks.

Five processes on the same framework parts as the mesh (``build_agent_app`` with its gate and
durable task store, ``ToolServer`` behind the request gate, ``ToolClient``, ``A2AClient`` with
a service token and a delegation envelope), making the refund's messages in the refund's order
and answering each at once with a fixed value:

    client ─A2A─► front ─► floor.lookup ─► shop ─► floor.read ─► ledger
                       ├─► check (A2A child, after the lookup)
                       ├─► risk  (A2A child, after the lookup)
                       │     └─► floor.lookup ─► shop ─► floor.read ─► ledger
                       └─► floor.write ─► ledger (after both children)

That is the refund's 3 A2A requests and 5 MCP calls, 2 A2A requests and 5 MCP calls of them
on the critical path, with no workflow, no database of the tool servers, no rules. Every agent
uses the orchestrator's contract (the echo agent's): the floor measures messages, not schemas.
``bench/refund_e2e.py`` runs it in the same run as the refund mesh and the echo agent and
prints refund / floor: what a refund costs over its hops.

    python bench/hop_floor.py --serve ROLE --port N [--peer NAME=URL ...]   (one process)

``--no-floor`` leaves it out of ``refund_e2e.py``. Run alone, it measures every topology in
``TOPOLOGIES`` (today's and four with fewer messages) against the echo agent in one run:

    python bench/hop_floor.py [--requests 128] [--c1-requests 32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final


@dataclass(frozen=True)
class Topology:
    """One arrangement of the refund's messages; ``refund`` is today's."""

    name: str
    what: str
    children: tuple[str, ...] = ("check", "risk")  # the A2A child tasks, started together
    risk_reads: bool = True  # the risk child makes its own lookup (an MCP call, then its hop)
    lookup_reads_ledger: bool = True  # the shop's lookup asks the ledger (a second MCP hop)

    @property
    def messages(self) -> str:
        a2a = 1 + len(self.children)
        lookup = 2 if self.lookup_reads_ledger else 1
        risk = lookup if self.risk_reads and "risk" in self.children else 0
        return f"{a2a} A2A, {lookup + risk + 1} MCP"


TOPOLOGIES: Final = {
    t.name: t
    for t in (
        Topology("refund", "today's refund"),
        Topology("one-check", "one check agent instead of two", children=("risk",)),
        Topology("facts-to-risk", "risk-check answers from the facts it is sent", risk_reads=False),
        Topology(
            "one-check-facts",
            "one check agent, answering from the facts it is sent",
            children=("risk",),
            risk_reads=False,
        ),
        Topology(
            "no-ledger-hop", "commerce answers without asking payments", lookup_reads_ledger=False
        ),
    )
}
ROLES: Final = ("ledger", "shop", "check", "risk", "front")
SERVES: Final = {"floor.read": "ledger", "floor.write": "ledger", "floor.lookup": "shop"}
"""Tool -> the floor process that serves it."""
AGENTS: Final = ("check", "risk", "front")
NOTES: Final = 6
"""Progress notes the front streams per request, besides the task's own events, so that the
client parses about as many updates as a refund's stream has (the bench prints both)."""


def _contract(name: str) -> Any:
    from accord.contracts.tools import IdempotencyKey, SideEffect, ToolContract

    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["text"],
        "properties": {"text": {"type": "string", "maxLength": 1000}},
    }
    return ToolContract(
        name=name,
        version="1.0.0",
        title=name,
        description="Answers its input at once.",
        side_effect=SideEffect.NONE,
        idempotency_key=IdempotencyKey.NONE,
        input_schema=schema,
        output_schema=schema,
    )


def _tools(role: str, peers: dict[str, str], names: tuple[str, ...]) -> Any:
    from accord.protocol.mcp.client import ToolClient
    from accord.protocol.mcp.config import ServerSpec
    from accord.protocol.mcp.credentials import ServiceCredential

    by_server: dict[str, list[str]] = {}
    for name in names:
        by_server.setdefault(SERVES[name], []).append(name)
    specs = [
        ServerSpec.http(server, f"{peers[server]}/mcp", [_contract(n) for n in tools])
        for server, tools in by_server.items()
    ]
    return ToolClient.for_servers(specs, credential=ServiceCredential(f"floor-{role}", names))


def serve_tools(role: str, port: int, peers: dict[str, str], topology: Topology) -> None:
    import uvicorn

    from accord.protocol.mcp.server import CallContext, NoResources, ToolServer, build_http_app
    from accord.protocol.mcp.server import tool as contract_tool

    async def answer(args: dict[str, Any], _ctx: CallContext) -> dict[str, Any]:
        return {"text": args["text"]}

    if role == "ledger":
        tools = [contract_tool(_contract(n), answer) for n, at in SERVES.items() if at == role]
        server = ToolServer("floor-ledger", "1.0.0", tools)
    else:
        client = _tools(role, peers, ("floor.read",))

        class Ledger(NoResources):
            async def start(self) -> None:
                await client.start()

            async def stop(self) -> None:
                await client.aclose()

        async def lookup(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
            if topology.lookup_reads_ledger:
                await client.call("floor.read", args, traceparent=ctx.traceparent)
            return {"text": args["text"]}

        server = ToolServer(
            "floor-shop",
            "1.0.0",
            [contract_tool(_contract("floor.lookup"), lookup)],
            resources=Ledger(),
        )
    uvicorn.run(build_http_app(server), host="127.0.0.1", port=port, log_level="warning")


def serve_agent(role: str, port: int, peers: dict[str, str], topology: Topology) -> None:
    from accord.protocol.settings import current
    from accord.protocol.telemetry.sdk_wrappers import quiet_a2a_sdk_wrappers

    quiet_a2a_sdk_wrappers(current().otel_library_spans)  # as `accord serve` does, before a2a

    import httpx
    import uvicorn

    from accord.contracts.agents import agent_contract
    from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
    from accord.protocol.a2a.client import DEFAULT_TIMEOUT, A2AClient, ResolvedCard
    from accord.protocol.a2a.client.card import resolve_card
    from accord.protocol.a2a.server import build_agent_app
    from accord.protocol.a2a.server.executor import (
        Completed,
        ContractExecutor,
        NeedsInput,
        Progress,
        Turn,
    )
    from accord.protocol.auth import service_token
    from accord.protocol.settings import ServeOptions

    contract = agent_contract("orchestrator")
    names = {
        "check": (),
        "risk": ("floor.lookup",) if topology.risk_reads else (),
        "front": ("floor.lookup", "floor.write"),
    }
    tools = _tools(role, peers, names[role]) if names[role] else None
    http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
    cards: dict[str, ResolvedCard] = {}

    def answer(text: str) -> Completed:
        data = {"decision": "refunded", "order_id": None, "reasons": [], "receipt": None}
        return Completed(data={**data, "explanation": text})

    async def child(name: str, turn: Turn, traceparent: str | None) -> None:
        if name not in cards:
            cards[name] = await resolve_card(http, peers[name])
        agent = A2AClient(cards[name], http, token=service_token(f"floor-{role}", ttl_s=3600))
        tenant = (
            turn.envelope.tenant
            if turn.envelope is not None
            else Tenant(
                app=turn.principal.app, user=turn.principal.subject, session=turn.context_id
            )
        )
        envelope = DelegationEnvelope(
            goal=f"floor {name}",
            budget=Budget(
                units=1, tool_calls=2, deadline=datetime.now(UTC) + timedelta(seconds=60)
            ),
            tenant=tenant,
            parent_task=turn.task_id,
            traceparent=traceparent,
        )
        await agent.send(text=turn.text, envelope=envelope, skill="refund.request")

    class Floor(ContractExecutor):
        async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
            if tools is None:
                return answer(turn.text)
            traceparent = turn.envelope.traceparent if turn.envelope is not None else None
            arguments = {"text": turn.text[:1000]}
            if role == "risk":
                await progress.update("reading", node="floor.lookup")
                await tools.call("floor.lookup", arguments, traceparent=traceparent)
                return answer(turn.text)
            notes = iter(range(NOTES))
            await progress.update(f"note {next(notes)}", node="lookup")
            await tools.call("floor.lookup", arguments, traceparent=traceparent)
            await progress.update(f"note {next(notes)}", node="lookup")
            await progress.update(f"note {next(notes)}", node="checks")
            await asyncio.gather(*(child(name, turn, traceparent) for name in topology.children))
            await progress.update(f"note {next(notes)}", node="checks")
            await progress.update(f"note {next(notes)}", node="write")
            await tools.call("floor.write", arguments, traceparent=traceparent)
            await progress.update(f"note {next(notes)}", node="write")
            return answer(turn.text)

    hooks = [tools.running] if tools is not None else []
    app = build_agent_app(
        contract,
        Floor(contract),
        ServeOptions(port=port),
        service_name=f"floor-{role}",
        lifespan_hooks=hooks,
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _trust(base_dir: Path) -> Path:
    """The floor's trust table: each role signs its own service tokens (as the mesh's services
    do), granted the floor's tools and the skill its children are asked for."""
    import yaml

    grants = [*SERVES, "refund.request"]
    services = {f"floor-{role}": {"grants": grants, "tenants": ["*"]} for role in ROLES}
    path = base_dir / "trust.yaml"
    path.write_text(yaml.safe_dump({"services": services}))
    return path


class FloorMesh:
    """The five floor processes, started in dependency order on free ports."""

    def __init__(self, base_dir: Path, topology: Topology) -> None:
        from accord.cli.mesh import free_ports

        self.ports = free_ports(ROLES)
        self.urls = {role: f"http://127.0.0.1:{port}" for role, port in self.ports.items()}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        peers = [f"--peer={role}={url}" for role, url in self.urls.items()]
        peers.append(f"--topology={topology.name}")
        keys = base_dir / "keys"  # every role's key ring, where the others read its JWKS
        keys.mkdir(mode=0o700, parents=True, exist_ok=True)
        shared = {"ACCORD_KEYS_DIR": str(keys), "ACCORD_SERVICE_TRUST": str(_trust(base_dir))}
        for role in ROLES:
            env = {**os.environ, **shared, "ACCORD_DATA_DIR": str(base_dir / f"floor-{role}")}
            args = [sys.executable, __file__, "--serve", role, "--port", str(self.ports[role])]
            self.processes[role] = subprocess.Popen(
                [*args, *peers], env=env, start_new_session=True
            )
        from refund_e2e import wait_healthy

        for role in ROLES:
            wait_healthy(f"{self.urls[role]}/readyz", self.processes[role], deadline_s=90.0)

    @property
    def url(self) -> str:
        return self.urls["front"]

    def stop(self) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.processes.values():
            proc.wait(timeout=15)


@contextmanager
def floor_mesh(topology: str = "refund") -> Iterator[FloorMesh]:
    mesh = FloorMesh(Path(tempfile.mkdtemp(prefix="accord-floor-")), TOPOLOGIES[topology])
    try:
        yield mesh
    finally:
        mesh.stop()


def measure_floor(
    topology: str, c: int, c1_requests: int, requests: int, profile_dir: Path | None
) -> Any:
    """One topology's floor, started, measured (refund_e2e's ``measure``: warm-up, c1, then c16
    with CPU per process) and stopped: idle, it would still share the cores."""
    from accord.protocol.auth import mint_token
    from refund_e2e import measure

    ask = [(mint_token(f"C-{9000 + i}", ["customer"]), "floor") for i in range(c)]
    batches = (ask, (ask * c1_requests)[:c1_requests], (ask * requests)[:requests])
    with floor_mesh(topology) as mesh:
        pids = {role: proc.pid for role, proc in mesh.processes.items()}
        return measure(
            f"floor {topology} (same hops, no work)", mesh.url, pids, batches, c, profile_dir
        )


def compare(requests: int, c1_requests: int, concurrency: int = 16) -> None:
    """Every topology's floor against the echo agent, in one run: what each way of cutting
    messages would buy before any of it is built."""
    import secrets

    os.environ["ACCORD_JWT_SECRET"] = secrets.token_urlsafe(32)
    os.environ["ACCORD_RATE_LIMIT_PER_S"] = "0"
    os.environ["ACCORD_DATA_DIR"] = tempfile.mkdtemp(prefix="accord-floor-")
    from refund_e2e import echo_baseline

    base1, base = echo_baseline(concurrency, requests)
    rows = [
        (topology, measure_floor(topology.name, concurrency, c1_requests, requests, None))
        for topology in TOPOLOGIES.values()
    ]
    print("floors against the echo agent (targets for a refund: >= 0.25x, <= 4x):")
    print(
        f"  {'topology':<17}{'messages':<16}{'c16 / echo':>11}{'c1 p50 / echo':>15}"
        f"{'CPU / echo':>12}  what"
    )
    for topology, got in rows:
        print(
            f"  {topology.name:<17}{topology.messages:<16}"
            f"{got.c16['rate'] / base['rate']:>10.3f}x{got.c1['p50'] / base1['p50']:>14.2f}x"
            f"{got.c16['cpu_ms'] / base['cpu_ms']:>11.1f}x  {topology.what}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", choices=ROLES)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--peer", action="append", default=[], help="NAME=URL")
    parser.add_argument("--topology", choices=TOPOLOGIES, default="refund")
    parser.add_argument("--requests", type=int, default=128, help="requests at concurrency 16")
    parser.add_argument("--c1-requests", type=int, default=32)
    ns = parser.parse_args()
    if ns.serve is None:
        compare(ns.requests, ns.c1_requests)
        return
    peers = dict(item.split("=", 1) for item in ns.peer)
    if ns.serve in AGENTS:
        serve_agent(ns.serve, ns.port, peers, TOPOLOGIES[ns.topology])
    else:
        serve_tools(ns.serve, ns.port, peers, TOPOLOGIES[ns.topology])


if __name__ == "__main__":
    main()
