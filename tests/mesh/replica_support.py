"""Two orchestrator replicas on one PostgreSQL database, with the other four services.

Replica A is the mesh's own ``orchestrator`` (tests/mesh/support.py ``running_mesh``); replica
B is a second ``accord serve orchestrator`` process on another port and with a data directory
of its own (a replica's data directory records its owner id, so replicas must not share one).
Both run with the same settings a deployment of several replicas needs: ``ACCORD_DATABASE_URL``,
and a lease TTL. Tests address a replica through ``via()``, which
gives the helpers of support.py (``ask``, ``approve``, ``get_task``, ...) a mesh whose
orchestrator is that replica.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import asyncpg
import httpx

from accord.contracts.tools import tool_contract
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import ServerSpec
from accord.protocol.mcp.credentials import StaticCredential
from tests.mesh.support import Mesh, running_mesh
from tests.support.processes import Service, free_port, run_service
from tests.support.tool_auth import acting_for

# Long enough that a busy 2-core machine never misses a heartbeat (renewed every TTL/3),
# short enough that a takeover after kill -9 takes seconds.
LEASE_TTL_S: Final = 4.0
REPLICA_ENV: Final = {
    "ACCORD_WORKFLOW_LEASE_TTL_S": str(LEASE_TTL_S),
}
Replica = Literal["a", "b"]


@dataclass
class Replicas:
    mesh: Mesh  # its "orchestrator" is replica A
    database_url: str
    b: Service
    a_env: dict[str, str]

    def via(self, replica: Replica) -> Mesh:
        """The mesh as a client sees it when its requests land on ``replica``."""
        port = self.mesh.ports["orchestrator"] if replica == "a" else self.b.port
        return dataclasses.replace(self.mesh, ports={**self.mesh.ports, "orchestrator": port})

    @property
    def a(self) -> Service:
        return self.mesh.services["orchestrator"]

    def kill_a(self) -> None:
        self.a.kill()  # SIGKILL: no shutdown code runs, its leases are left to expire

    def ensure_a(self) -> None:
        """Start replica A again if a test killed it (same data directory and settings)."""
        if self.a.process.poll() is not None:
            self.mesh.start("orchestrator", self.a_env)

    def restart_a(self) -> None:
        """SIGKILL replica A (if it runs) and start it again on the same data directory."""
        self.kill_a()
        self.ensure_a()

    def wait_for_log(self, replica: Replica, text: str, deadline_s: float = 90.0) -> None:
        service = self.a if replica == "a" else self.b
        end = time.monotonic() + deadline_s
        while text not in service.log():
            if time.monotonic() > end:
                raise TimeoutError(f"{text!r} not in replica {replica}'s log in {deadline_s}s")
            time.sleep(0.05)  # polling a log file, bounded by the deadline

    # -- what the shared database holds ----------------------------------------------------
    async def refund_rows(self, order_id: str) -> int:
        """Refunds of ``order_id`` in the payments ledger (every key, not only ours)."""
        rows = await self._fetch(
            "SELECT count(*) AS n FROM payments_refunds WHERE order_id = $1", order_id
        )
        return int(rows[0]["n"])

    async def event_counts(self, workflow_id: str) -> dict[tuple[str, str], int]:
        """(event type, node or "") -> how often it is in the workflow's log."""
        rows = await self._fetch(
            "SELECT type, coalesce(node, '') AS node, count(*) AS n FROM workflow_events "
            "WHERE workflow_id = $1 GROUP BY type, node",
            workflow_id,
        )
        return {(str(r["type"]), str(r["node"])): int(r["n"]) for r in rows}

    async def refund_receipt(self, key: str, customer_id: str) -> dict[str, Any]:
        """``refunds.get`` by the workflow's business key, over MCP like the orchestrator."""
        spec = ServerSpec.http(
            "payments",
            self.mesh.url("payments") + "/mcp",
            [tool_contract("refunds.issue"), tool_contract("refunds.get")],
        )
        # The orchestrator's own key asking for refunds.get only, acting for the customer.
        granted = self.mesh.service_token("orchestrator", grants=["refunds.get"])
        credential = StaticCredential(token=granted)
        async with ToolClient.for_servers([spec], credential=credential) as tools:
            return await tools.call(
                "refunds.get",
                {"idempotency_key": key, "customer_id": customer_id},
                acting_for=acting_for(customer_id),
            )

    async def policy_tasks(self) -> dict[str, str]:
        """policy-check's tasks (as the orchestrators' service principal): id -> A2A state."""
        headers = {
            "A2A-Version": "1.0",
            "Authorization": f"Bearer {self.mesh.service_token('orchestrator')}",
        }
        async with httpx.AsyncClient() as http:
            answer = await http.get(self.mesh.url("policy") + "/tasks", headers=headers)
        answer.raise_for_status()
        return {t["id"]: t["status"]["state"] for t in answer.json().get("tasks", [])}

    async def _fetch(self, query: str, *args: object) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(self.database_url)
        try:
            return list(await conn.fetch(query, *args))
        finally:
            await conn.close()


@contextmanager
def running_replicas(
    base: Path, database_url: str, a_env: dict[str, str], b_env: dict[str, str]
) -> Iterator[Replicas]:
    """The five services (A among them) and replica B, all on ``database_url``; ``a_env`` and
    ``b_env`` are added to each replica's environment (test pause points)."""
    a_env = {**REPLICA_ENV, **a_env}
    with running_mesh(base, database_url=database_url, orchestrator_env=a_env) as mesh:
        b = start_replica(mesh, base / "replica-b", "orchestrator-b", b_env)
        yield Replicas(mesh=mesh, database_url=database_url, b=b, a_env=a_env)


def start_replica(
    mesh: Mesh,
    data_dir: Path,
    name: str,
    env: dict[str, str],
    *,
    python: str | None = None,
    cwd: Path | None = None,
) -> Service:
    """Another orchestrator replica beside ``mesh``'s, on a port and a data directory of its
    own, with the mesh's settings and ``env``; it stops with the mesh. ``python`` and ``cwd``
    run it from another environment (another release's: tests/storage/releases.py)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    full_env = {**mesh.env, **REPLICA_ENV, **env, "ACCORD_DATA_DIR": str(data_dir)}
    running = run_service(
        name,
        ["serve", "orchestrator"],
        port=free_port(),
        env=full_env,
        log_dir=mesh.log_dir,
        deadline_s=90.0,
        python=python,
        cwd=cwd,
    )
    return mesh.stack.enter_context(running)
