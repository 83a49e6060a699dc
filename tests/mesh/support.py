"""The five services as real processes for cross-service tests, and small client helpers."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.auth import mint_token
from tests.support.processes import Service, free_port, run_service
from tests.support.service_keys import service_subject_token, sign_as

SECRET: Final = "mesh-test-secret-0123456789abcdef0123456789abcdef"
SERVICES: Final = ("commerce", "payments", "policy", "risk", "orchestrator")
PAUSE_MARKER: Final = "accord-test-pause"


@dataclass
class Mesh:
    data_dir: Path
    log_dir: Path
    ports: dict[str, int]
    env: dict[str, str]
    services: dict[str, Service] = field(default_factory=dict)
    stack: ExitStack = field(default_factory=ExitStack)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    @property
    def orchestrator(self) -> str:
        return self.url("orchestrator")

    def start(self, name: str, extra_env: dict[str, str] | None = None) -> Service:
        running = run_service(
            name,
            ["serve", name],
            port=self.ports[name],
            env={**self.env, **(extra_env or {})},
            log_dir=self.log_dir,
            deadline_s=90.0,
        )
        service = running.__enter__()  # waits for its health
        self.stack.push(running.__exit__)
        self.services[name] = service
        return service

    def start_all(
        self, service_env: dict[str, dict[str, str]], names: Sequence[str] = SERVICES
    ) -> None:
        """All five (or ``names``) at once (start-up is mostly imports: two cores do two at a
        time)."""
        with ThreadPoolExecutor(max(1, len(names))) as pool:
            futures = [pool.submit(self.start, n, service_env.get(n)) for n in names]
        for future in futures:
            future.result()  # re-raise a service that did not start

    def restart_orchestrator(
        self, extra_env: dict[str, str] | None = None, *, kill: bool = True
    ) -> Service:
        old = self.services["orchestrator"]
        if kill:
            old.kill()  # SIGKILL: no shutdown code runs
        else:
            old.stop()
        return self.start("orchestrator", extra_env)

    def service_token(self, service: str, *, grants: Sequence[str] = (), **options: Any) -> str:
        """A token of ``svc:SERVICE`` signed by that service's own key, as the mesh's services
        sign theirs (``grants`` ask for fewer than the verifiers' trust table gives)."""
        return sign_as(service, scopes=grants, **options)

    def orchestrator_log(self) -> str:
        return self.services["orchestrator"].log()

    def wait_for_log(self, text: str, deadline_s: float = 60.0) -> None:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if text in self.orchestrator_log():
                return
            time.sleep(0.05)  # polling a log file, bounded by the deadline
        raise TimeoutError(f"{text!r} not in the orchestrator log within {deadline_s}s")

    def refund_keys(self) -> dict[str, str]:
        """idempotency key -> order id of the workflows' refunds in the payments ledger."""
        with sqlite3.connect(self.data_dir / "payments.db") as conn:
            rows = conn.execute(
                "SELECT idempotency_key, order_id FROM payments_refunds "
                "WHERE idempotency_key LIKE 'refund:%'"
            ).fetchall()
        return {str(key): str(order) for key, order in rows}

    def workflow_events(self, workflow_id: str, *types: str) -> list[tuple[str, dict[str, Any]]]:
        """(type, data) of the workflow's events in its log, in order; only ``types`` if given
        (SQLite meshes only)."""
        with sqlite3.connect(self.data_dir / "orchestrator-workflows.db") as conn:
            rows = conn.execute(
                "SELECT type, data FROM workflow_events WHERE workflow_id = ? ORDER BY seq",
                (workflow_id,),
            ).fetchall()
        return [(str(kind), json.loads(data)) for kind, data in rows if not types or kind in types]

    def refund_rows(self) -> dict[str, int]:
        """order id -> refunds in the payments ledger (SQLite meshes only)."""
        with sqlite3.connect(self.data_dir / "payments.db") as conn:
            rows = conn.execute(
                "SELECT order_id, count(*) FROM payments_refunds "
                "WHERE idempotency_key LIKE 'refund:%' GROUP BY order_id"
            ).fetchall()
        return {str(order): int(n) for order, n in rows}


@contextmanager
def running_mesh(
    base: Path,
    *,
    database_url: str | None = None,
    orchestrator_env: dict[str, str] | None = None,
    service_env: dict[str, dict[str, str]] | None = None,
    services: Sequence[str] = SERVICES,
) -> Iterator[Mesh]:
    """The five services; ``service_env`` adds variables per service (``orchestrator_env``
    is short for ``service_env={"orchestrator": ...}``). Only ``services`` are started; every
    one has its port and URL all the same, so a test can start the others later
    (``Mesh.start``)."""
    data_dir, log_dir = base / "data", base / "logs"
    data_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    ports = {name: free_port() for name in SERVICES}
    env = {
        "ACCORD_DATA_DIR": str(data_dir),
        "ACCORD_JWT_SECRET": SECRET,
        "ACCORD_WORKFLOW_LEASE_TTL_S": "3",
        **{f"ACCORD_{n.upper()}_URL": f"http://127.0.0.1:{p}" for n, p in ports.items()},
    }
    if database_url:
        env["ACCORD_DATABASE_URL"] = database_url
    mesh = Mesh(data_dir, log_dir, ports, env)
    with mesh.stack:
        extra = dict(service_env or {})
        if orchestrator_env:
            extra["orchestrator"] = {**extra.get("orchestrator", {}), **orchestrator_env}
        mesh.start_all(extra, services)
        yield mesh


def token(subject: str, *roles: str) -> str:
    """A person's HS256 token; with the ``service`` role, that service's own key's token."""
    if "service" in roles:
        return service_subject_token(subject, roles=list(roles))
    return mint_token(subject, roles or ("customer",), secret=SECRET)


async def customer(mesh: Mesh, subject: str) -> A2AClient:
    return await A2AClient.connect(mesh.orchestrator, token=token(subject))


async def ask(
    mesh: Mesh, subject: str, text: str, updates: list[TaskView] | None = None, **kwargs: Any
) -> TaskView:
    """A customer's first message; every streamed view is appended to ``updates``."""
    async with await customer(mesh, subject) as client:
        return await client.send(
            text=text,
            skill="refund.request",
            on_update=(updates.append if updates is not None else None),
            **kwargs,
        )


async def answer(mesh: Mesh, subject: str, task: TaskView | str, text: str) -> TaskView:
    async with await customer(mesh, subject) as client:
        return await client.send(text=text, task=task)


async def approve(
    mesh: Mesh,
    subject: str,
    roles: tuple[str, ...],
    task_id: str,
    decision: str = "approve",
    note: str = "",
) -> TaskView:
    async with await A2AClient.connect(mesh.orchestrator, token=token(subject, *roles)) as c:
        data = {"task_id": task_id, "decision": decision}
        if note:
            data["note"] = note
        return await c.send(data=data, skill="refund.approve")


async def get_task(mesh: Mesh, subject: str, task_id: str) -> TaskView:
    async with await customer(mesh, subject) as client:
        return await client.get(task_id)


async def until(
    mesh: Mesh, subject: str, task_id: str, *statuses: Status, deadline_s: float = 60.0
) -> TaskView:
    """Poll the customer's task until it is in one of ``statuses``."""
    end = time.monotonic() + deadline_s
    view = await get_task(mesh, subject, task_id)
    while view.status not in statuses:
        if time.monotonic() > end:
            raise TimeoutError(f"task {task_id} still {view.status.value} after {deadline_s}s")
        await asyncio.sleep(0.1)
        view = await get_task(mesh, subject, task_id)
    return view


def nodes_named(updates: list[TaskView]) -> set[str]:
    return {v.node for v in updates if v.node}
