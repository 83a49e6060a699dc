"""What refunds waiting for an approver cost the orchestrator: memory and wake-ups while idle.

    .venv/bin/python bench/waiting.py [--count 10000] [--live 64] [--window 10]

Starts the mesh (five processes, SQLite, a fresh temporary data directory, free ports) and:

1. baseline: restarts the orchestrator with 0 workflows and measures it idle;
2. live: brings refunds to waiting-for-approval through the real A2A API (order O-1006 of C-04:
   five refunds in 90 days, so every amount goes to an approver), first ``2 x --concurrency``
   to warm the request path up, then ``--live`` more, measuring the same process after each:
   what the request path keeps per waiting workflow;
3. seeded: stops the orchestrator, appends ``--count`` copies of one of those real waiting
   refunds to its event log (``EventLog.append``, the runtime's own write path, with fresh
   workflow, interrupt and timer ids: the same rows a real refund leaves), restarts it and
   measures it idle once more: what a restart and the runtime keep per waiting workflow;
4. correctness: an approver approves one seeded refund and its task completes.

A real refund costs ~0.1 s of five services' work, so 10,000 through the API would take the
bench half an hour; the copies are byte for byte what the real ones left in the log (the
orchestrator keeps no other record of a task), and the live phase covers what only the request
path could keep.

Memory: the process's resident set (VmRSS, and RssAnon: heap, without the shared libraries and
the SQLite file pages) after ``gc`` has had its chance, i.e. after the window below. Wake-ups:
context switches of every thread of the process (``/proc/PID/task/*/status``, voluntary and
involuntary) over ``--window`` seconds of idleness: each time a sleeping thread is woken (a
timer, a poll, a socket) counts once, whatever woke it; no tracer attached, so the figure is
not disturbed by the measurement. Everything is compared with the baseline of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ORDER = "O-1006"  # C-04's: five refunds in 90 days, so an approver decides every amount
CUSTOMER = "C-04"
APPROVER = "approver-1"
SEED_BATCH = 500  # workflows appended concurrently: the log's group commit batches them


@dataclass(frozen=True)
class Idle:
    rss_kb: int
    anon_kb: int
    wakeups_per_s: float


def proc_status(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def context_switches(pid: int) -> int:
    """Of every thread of the process, since each started."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = proc_status(task / "status")
        except FileNotFoundError:  # a thread that ended just now
            continue
        total += int(status["voluntary_ctxt_switches"]) + int(status["nonvoluntary_ctxt_switches"])
    return total


def kb(value: str) -> int:
    return int(value.split()[0])


def measure_idle(pid: int, window_s: float) -> Idle:
    """Wake-ups over the window (nothing is sent to the process), then its memory."""
    before, started = context_switches(pid), time.monotonic()
    time.sleep(window_s)  # the measurement window itself: the process is left alone
    after, elapsed = context_switches(pid), time.monotonic() - started
    status = proc_status(Path(f"/proc/{pid}/status"))
    return Idle(kb(status["VmRSS"]), kb(status["RssAnon"]), (after - before) / elapsed)


class Orchestrator:
    """The orchestrator process of the mesh, restartable on its port with the mesh's env."""

    def __init__(self, mesh: Any, env: dict[str, str]) -> None:
        self.mesh = mesh
        self.env = env
        self.proc: subprocess.Popen[bytes] = mesh.processes["orchestrator"]

    @property
    def url(self) -> str:
        return str(self.mesh.url("orchestrator"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)

    def start(self) -> float:
        """Start it and wait for /readyz; the seconds that took."""
        started = time.monotonic()
        with self.mesh.log_path("orchestrator").open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "accord.cli.main",
                    "serve",
                    "orchestrator",
                    "--port",
                    str(self.mesh.ports["orchestrator"]),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        self.mesh.processes["orchestrator"] = self.proc
        wait_ready(self.url, self.proc)
        return time.monotonic() - started


def wait_ready(url: str, proc: subprocess.Popen[bytes], deadline_s: float = 120.0) -> None:
    import httpx

    end = time.monotonic() + deadline_s
    while time.monotonic() < end and proc.poll() is None:
        try:
            if httpx.get(f"{url}/readyz", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # poll interval, bounded by the deadline
    raise RuntimeError(f"{url} did not become ready")


async def warm(url: str, token: str) -> None:
    """The same light touch before each measurement: a connection (the agent card)."""
    from accord.protocol.a2a.client import A2AClient

    async with await A2AClient.connect(url, token=token):
        pass


async def bring_to_approval(url: str, token: str, count: int, concurrency: int) -> list[str]:
    """``count`` refunds of 1.00 each to waiting-for-approval through the API; their task ids."""
    from accord.contracts.status import WaitingReason
    from accord.protocol.a2a.client import A2AClient

    ids: list[str] = []
    left = list(range(count))
    async with await A2AClient.connect(url, token=token) as client:

        async def worker() -> None:
            while left:
                left.pop()
                view = await client.send(
                    text=f"I changed my mind, please refund $1 of order {ORDER}",
                    skill="refund.request",
                )
                if view.waiting_reason is not WaitingReason.APPROVAL:
                    raise RuntimeError(f"refund not waiting for an approver: {view}")
                ids.append(view.task_id)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ids


async def seed(log_url: str, template_id: str, count: int) -> float:
    """Append ``count`` copies of a waiting refund's log with fresh ids; seconds it took."""
    from accord.contracts.status import Status
    from accord.runtime.workflow.eventlog import open_event_log
    from accord.runtime.workflow.events import EventType, NewEvent

    log = open_event_log(log_url)
    await log.open()
    try:
        events = await log.read(template_id)
        record = await log.record(template_id)
        if record is None or record.status is not Status.WAITING:
            raise RuntimeError(f"the template refund is not waiting: {record}")
        text = json.dumps([[e.type.value, e.node, e.data] for e in events])
        # Ids the copy must not share with the original: the workflow's and every uuid in it.
        own = {template_id}
        for event in events:
            for key in ("interrupt_id", "timer_id"):
                if isinstance(event.data.get(key), str):
                    own.add(event.data[key])
        started = time.monotonic()

        async def copy(index: int) -> None:
            new_id = f"bench-wait-{index:06d}-{uuid.uuid4().hex[:8]}"
            body = text
            for old in own:
                body = body.replace(old, new_id if old == template_id else uuid.uuid4().hex)
            new = [NewEvent(EventType(t), n, d) for t, n, d in json.loads(body)]
            await log.append(
                new_id,
                0,
                new,
                status=Status.WAITING,
                scope=record.scope,
                context_id=uuid.uuid4().hex,
            )

        for first in range(0, count, SEED_BATCH):
            await asyncio.gather(*(copy(i) for i in range(first, min(count, first + SEED_BATCH))))
        return time.monotonic() - started
    finally:
        await log.close()


async def approve_one(url: str, token: str, task_id: str, customer_token: str) -> str:
    from accord.contracts.status import Status
    from accord.protocol.a2a.client import A2AClient

    async with await A2AClient.connect(url, token=token) as approver:
        decided = await approver.send(
            data={"task_id": task_id, "decision": "approve"}, skill="refund.approve"
        )
    if decided.error is not None:
        raise RuntimeError(f"approval failed: {decided.error}")
    async with await A2AClient.connect(url, token=customer_token) as client:
        view = await client.get(task_id)
    if view.status is not Status.COMPLETED:
        raise RuntimeError(f"approved refund not completed: {view.status}")
    return str((view.data or {}).get("decision"))


def row(name: str, idle: Idle, base: Idle, waiting: int, *, per_waiting: bool = False) -> None:
    """One measurement; ``per_waiting``: also its memory over the baseline per waiting workflow
    (only for a restarted process: in the same process it is the allocator's high-water mark)."""
    per = ""
    if waiting and per_waiting:
        per_rss = (idle.rss_kb - base.rss_kb) * 1024 / waiting
        per_anon = (idle.anon_kb - base.anon_kb) * 1024 / waiting
        per = f"  per waiting: RSS {per_rss:7.0f} B, anon {per_anon:7.0f} B"
    print(
        f"{name:<34} {waiting:>6} waiting  RSS {idle.rss_kb / 1024:7.1f} MiB "
        f"(anon {idle.anon_kb / 1024:6.1f})  wake-ups {idle.wakeups_per_s:6.1f}/s "
        f"({idle.wakeups_per_s / max(base.wakeups_per_s, 0.01):.2f}x){per}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=10_000, help="seeded waiting refunds")
    parser.add_argument("--live", type=int, default=64, help="waiting refunds through the API")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--window", type=float, default=10.0, help="idle seconds measured")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="accord-waiting-"))
    os.environ["ACCORD_DATA_DIR"] = str(data_dir)
    os.environ["ACCORD_JWT_SECRET"] = secrets.token_urlsafe(32)
    os.environ["ACCORD_RATE_LIMIT_PER_S"] = "0"  # one caller at full speed
    from accord.cli.mesh import free_ports, start_mesh
    from accord.protocol.auth import mint_token

    mesh = start_mesh(data_dir, ports=free_ports())
    orchestrator = Orchestrator(mesh, {**os.environ, **mesh.env()})
    log_url = f"sqlite:///{data_dir / 'orchestrator-workflows.db'}"
    customer = mint_token(CUSTOMER, ["customer"])
    approver = mint_token(APPROVER, ["approver"])
    try:
        print(f"mesh of five processes, SQLite, {os.cpu_count()} CPUs, window {args.window:.0f} s")
        # The baseline: the orchestrator restarted with 0 workflows (as the seeded one will be).
        orchestrator.stop()
        base_start_s = orchestrator.start()
        asyncio.run(warm(orchestrator.url, customer))
        base = measure_idle(orchestrator.proc.pid, args.window)
        row("baseline: idle, 0 waiting", base, base, 0)

        # Warm the request path first (connections to the peers and tool servers, caches, the
        # allocator's arenas), so that the live figure is what stays per waiting workflow.
        warmup = asyncio.run(
            bring_to_approval(orchestrator.url, customer, args.concurrency * 2, args.concurrency)
        )
        asyncio.run(warm(orchestrator.url, customer))
        warmed = measure_idle(orchestrator.proc.pid, args.window)
        row("warmed up (same process)", warmed, base, len(warmup))
        started = time.monotonic()
        live = asyncio.run(
            bring_to_approval(orchestrator.url, customer, args.live, args.concurrency)
        )
        took = time.monotonic() - started
        asyncio.run(warm(orchestrator.url, customer))
        after_live = measure_idle(orchestrator.proc.pid, args.window)
        row("after live refunds (same process)", after_live, base, len(warmup) + len(live))
        per = (after_live.anon_kb - warmed.anon_kb) * 1024 / len(live)
        print(
            f"  ({len(live)} more refunds to waiting through the API in {took:.1f} s: "
            f"anon {per:.0f} B per waiting workflow against the warmed-up figure)"
        )
        live = warmup + live

        orchestrator.stop()
        seed_s = asyncio.run(seed(log_url, live[0], args.count))
        print(f"  (seeded {args.count} copies of a waiting refund in {seed_s:.1f} s)")
        start_s = orchestrator.start()
        asyncio.run(warm(orchestrator.url, customer))
        seeded = measure_idle(orchestrator.proc.pid, args.window)
        row("seeded, restarted", seeded, base, args.count + len(live), per_waiting=True)
        print(
            f"  (restart to /readyz with {args.count + len(live)} waiting: {start_s:.1f} s, "
            f"with 0: {base_start_s:.1f} s)"
        )

        target = f"bench-wait-{args.count // 2:06d}"
        from sqlite3 import connect

        with connect(data_dir / "orchestrator-workflows.db") as db:
            found = db.execute(
                "SELECT id FROM workflow_runs WHERE id LIKE ?", (target + "%",)
            ).fetchone()
        started = time.monotonic()
        decision = asyncio.run(approve_one(orchestrator.url, approver, found[0], customer))
        print(
            f"correctness: approved {found[0]} -> completed ({decision}) "
            f"in {(time.monotonic() - started) * 1000:.0f} ms"
        )
    finally:
        mesh.stop()


if __name__ == "__main__":
    main()
