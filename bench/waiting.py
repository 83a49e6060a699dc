"""What a refund waiting for an approver (or for the customer's answer) costs the orchestrator,
against what a completed refund leaves: memory per request and wake-ups while idle, both
through the real A2A API.

    .venv/bin/python bench/waiting.py [--count 2000] [--concurrency 16] [--input-share 0.25]
        [--window 10] [--tracemalloc DIR]

``make waiting`` is the long run (``--count 10000``). Starts the mesh (five processes, SQLite,
a fresh temporary data directory, free ports) and seeds delivered orders, each of its own
long-standing customer (bench/refund_e2e.py's seeding): 19.99 ones, refunded at once, and
600.00 ones, over the approval threshold, so that every refund of one waits for an approver.
Every request is a customer's first message, streamed, with the customer's own token, so both
kinds cost the gate the same. Then two fresh orchestrator processes of the same run, one per
kind:

1. **completed**: the orchestrator restarted, warmed up (the same warm-up in both phases: a
   few refunds of each kind), measured idle (the phase's baseline), then ``--count`` refunds
   that complete, then measured idle again;
2. **waiting**: the orchestrator restarted, the same warm-up, its baseline, then ``--count``
   refunds that stop waiting: ``1 - --input-share`` of them for an approver and the rest for
   the customer's answer (a message without an order number: the orchestrator asks which),
   then measured idle again;
3. **restarted**: the orchestrator restarted with every waiting refund of the run in its log,
   measured idle, against the same process restarted with none at the start of the run;
4. **correctness**: an approver approves a waiting refund (it completes), a customer answers a
   waiting question with the order (it goes to the approver), a third waiting refund is
   canceled, all after the restart.

Both figures are per request, over the phase's own baseline, in a fresh process each: the fair
comparison (a completed phase before the waiting one in the same process would lend it its
allocator's high-water mark, the other order would charge it). The target (issue #35): a
waiting refund costs less than 2 KB more than a completed one, and wake-ups while idle do not
depend on how many wait.

Memory: the process's resident set (VmRSS, and RssAnon: heap, without the shared libraries and
the SQLite file pages), read after ``--window`` seconds in which nothing is sent to it (``gc``
has had its chance, and a waiting task's 1 s in the request handler is over). Wake-ups:
context switches of every thread of the process (``/proc/PID/task/*/status``, voluntary and
involuntary) over that window: each time a sleeping thread is woken (a timer, a poll, a
socket) counts once, whatever woke it; no tracer attached. ``--tracemalloc DIR`` runs the
orchestrator with tracemalloc, started at each phase's baseline (slower: its figures are for
finding what is kept, not for the table), and prints what is alive after the phase that was
not before it, by traceback; the snapshots stay in DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from refund_e2e import seed_orders

WAITING_CENTS: Final = 60_000  # an order of 600.00: over the approval threshold (500.00)
# Seeded orders and customers O-/C-<n> from these on: above the demo data's (O-9001 is the
# contract kit's), room for the long run's 10,064 of each kind.
FIRST_COMPLETING: Final = 20_000
FIRST_WAITING: Final = 40_000
APPROVER: Final = "approver-1"
ASK_TEXT: Final = "I want a refund, the running shoes do not fit"  # no order: it asks which
TARGET_BYTES: Final = 2048  # per waiting request, beyond a completed one (issue #35)
LATEST: Final = "latest.snap"

# The orchestrator under tracemalloc: SIGUSR1 collects garbage and writes a snapshot to the
# file named by ACCORD_BENCH_SNAPSHOT, the first one starting the tracing (bench only: the
# served code is the same).
TRACED: Final = """
import gc, os, runpy, signal, sys, tracemalloc
def dump(*_):
    gc.collect()
    if not tracemalloc.is_tracing():  # the first: tracing starts here (imports untraced)
        tracemalloc.start(int(os.environ.get("ACCORD_BENCH_FRAMES", "16")))
    path = os.environ["ACCORD_BENCH_SNAPSHOT"] + ".tmp"
    tracemalloc.take_snapshot().dump(path)
    os.replace(path, os.environ["ACCORD_BENCH_SNAPSHOT"])
signal.signal(signal.SIGUSR1, dump)
sys.argv = ["accord", *sys.argv[1:]]
runpy.run_module("accord.cli.main", run_name="__main__")
"""


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

    def __init__(self, mesh: Any, env: dict[str, str], trace_dir: Path | None) -> None:
        self.mesh = mesh
        self.env = env
        self.trace_dir = trace_dir
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
        head = [sys.executable, "-c", TRACED] if self.trace_dir else [sys.executable, "-m"]
        args = ["accord.cli.main"] if not self.trace_dir else []
        port = str(self.mesh.ports["orchestrator"])
        with self.mesh.log_path("orchestrator").open("ab") as log:
            self.proc = subprocess.Popen(
                [*head, *args, "serve", "orchestrator", "--port", port],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        self.mesh.processes["orchestrator"] = self.proc
        wait_ready(self.url, self.proc)
        return time.monotonic() - started

    def restart(self) -> float:
        self.stop()
        return self.start()

    def snapshot(self, name: str) -> Path | None:
        """A tracemalloc snapshot of the process, after gc (only with --tracemalloc)."""
        if self.trace_dir is None:
            return None
        latest = self.trace_dir / LATEST
        latest.unlink(missing_ok=True)
        self.proc.send_signal(signal.SIGUSR1)
        end = time.monotonic() + 300
        while not latest.exists():
            if time.monotonic() > end or self.proc.poll() is not None:
                raise RuntimeError(f"no snapshot {latest}")
            time.sleep(0.2)  # the process writes it; bounded by the deadline
        return latest.rename(self.trace_dir / f"{name}.snap")


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


@dataclass(frozen=True)
class Ask:
    """One refund request: who sends it, what, and the state it must stop in."""

    token: str
    text: str
    expect: str  # "completed", "approval" or "input"
    order: str  # the customer's own order (the one asked about, or the answer to "which?")


@dataclass
class Sent:
    ids: dict[str, list[tuple[str, Ask]]]  # expect -> (task id, its ask)
    seconds: float


async def send_all(url: str, asks: list[Ask], concurrency: int) -> Sent:
    """Every ask through the A2A API (the client streams, as the CLI and console do), at
    ``concurrency``; each must stop in its expected state."""
    import httpx

    from accord.contracts.status import Status, WaitingReason
    from accord.protocol.a2a.client import A2AClient

    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    ids: dict[str, list[tuple[str, Ask]]] = {"completed": [], "approval": [], "input": []}
    left = list(reversed(asks))
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=120.0), limits=limits) as http:
        first = await A2AClient.connect(url, token=asks[0].token, http=http)

        async def worker() -> None:
            while left:
                ask = left.pop()
                client = A2AClient(first.card, http, token=ask.token)
                view = await client.send(text=ask.text, skill="refund.request")
                got = (
                    "completed"
                    if view.status is Status.COMPLETED
                    else "approval"
                    if view.waiting_reason is WaitingReason.APPROVAL
                    else "input"
                    if view.waiting_reason is WaitingReason.INPUT
                    else f"{view.status.value}/{view.error.code.value if view.error else '-'}"
                )
                if got != ask.expect:
                    raise RuntimeError(f"expected {ask.expect}, got {got}: {view}")
                ids[got].append((view.task_id, ask))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Sent(ids, time.monotonic() - started)


def asks_of(pairs: list[tuple[str, str]], expect: str, input_share: float = 0.0) -> list[Ask]:
    """One ask per (order, customer), each customer's own token: ``expect`` "completed" (an
    order under the threshold) or "waiting" (over it: waits for an approver), with
    ``input_share`` of them, spread evenly, a message without the order (it asks which)."""
    inputs = round(len(pairs) * input_share)
    out: list[Ask] = []
    for i, (oid, cid) in enumerate(pairs):
        token = mint(cid)
        # Bresenham: the i-th ask is a question when the running share crosses a whole one.
        if (i + 1) * inputs // len(pairs) > i * inputs // len(pairs):
            out.append(Ask(token, ASK_TEXT, "input", oid))
        else:
            text = f"wrong size, please refund order {oid}"
            out.append(Ask(token, text, "approval" if expect == "waiting" else expect, oid))
    return out


def mint(customer: str) -> str:
    from accord.protocol.auth import mint_token

    return mint_token(customer, ["customer"])


async def correctness(url: str, approver: str, ids: dict[str, list[tuple[str, Ask]]]) -> str:
    """An approval completes a waiting refund, an answer moves a question on, a cancel ends a
    third: the waiting tasks still work after a restart."""
    from accord.contracts.status import Status, WaitingReason
    from accord.protocol.a2a.client import A2AClient

    lines = []
    task_id, ask = ids["approval"][len(ids["approval"]) // 2]
    started = time.monotonic()
    async with await A2AClient.connect(url, token=approver) as client:
        decided = await client.send(
            data={"task_id": task_id, "decision": "approve"}, skill="refund.approve"
        )
        if decided.error is not None:
            raise RuntimeError(f"approval failed: {decided.error}")
    async with await A2AClient.connect(url, token=ask.token) as client:
        view = await client.get(task_id)
    if view.status is not Status.COMPLETED:
        raise RuntimeError(f"approved refund not completed: {view}")
    lines.append(
        f"approved {task_id} -> completed ({(view.data or {}).get('decision')}) "
        f"in {(time.monotonic() - started) * 1000:.0f} ms"
    )
    if ids["input"]:
        asked, ask = ids["input"][len(ids["input"]) // 2]
        started = time.monotonic()
        async with await A2AClient.connect(url, token=ask.token) as client:
            answered = await client.send(text=ask.order, task=asked, skill="refund.request")
        if answered.waiting_reason is not WaitingReason.APPROVAL:
            raise RuntimeError(f"answered question did not go to the approver: {answered}")
        lines.append(
            f"answered {asked} -> waiting for approval "
            f"in {(time.monotonic() - started) * 1000:.0f} ms"
        )
    canceled_id, ask = ids["approval"][0]
    async with await A2AClient.connect(url, token=ask.token) as client:
        canceled = await client.cancel(canceled_id)
    if canceled.status is not Status.FAILED:
        raise RuntimeError(f"canceled refund not ended: {canceled}")
    lines.append(f"canceled {canceled_id} -> {canceled.a2a_state}")
    return "\n".join(f"correctness: {line}" for line in lines)


def top_kept(before: Path, after: Path, per: int, limit: int = 12) -> None:
    """Allocations alive after the phase and not before, by traceback, largest first."""
    import tracemalloc

    old = tracemalloc.Snapshot.load(str(before))
    new = tracemalloc.Snapshot.load(str(after))
    noise = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = new.filter_traces(noise).compare_to(old.filter_traces(noise), "traceback")
    total = sum(d.size_diff for d in diff)
    print(f"    tracemalloc: {total / 1024:.0f} KiB more alive ({total / per:.0f} B per request)")
    for stat in diff[:limit]:
        if stat.size_diff <= 0:
            break
        frames = [
            f"{Path(f.filename).name}:{f.lineno}"
            for f in stat.traceback
            if "site-packages/a2a" in f.filename or "/accord/" in f.filename
        ] or [f"{Path(f.filename).name}:{f.lineno}" for f in stat.traceback][-3:]
        print(
            f"      {stat.size_diff / 1024:8.1f} KiB {stat.count_diff:+6d} blocks  "
            + " < ".join(frames[-4:][::-1])
        )


@dataclass(frozen=True)
class Phase:
    name: str
    base: Idle
    after: Idle
    count: int
    seconds: float

    def per_request(self) -> tuple[float, float]:
        """Bytes per request over the phase's baseline: RSS, anon."""
        return (
            (self.after.rss_kb - self.base.rss_kb) * 1024 / self.count,
            (self.after.anon_kb - self.base.anon_kb) * 1024 / self.count,
        )

    def print(self) -> None:
        rss, anon = self.per_request()
        ratio = self.after.wakeups_per_s / max(self.base.wakeups_per_s, 0.01)
        print(
            f"{self.name:<10} {self.count:>6} in {self.seconds:6.1f} s  "
            f"RSS {self.base.rss_kb / 1024:6.1f} -> {self.after.rss_kb / 1024:6.1f} MiB  "
            f"anon {self.base.anon_kb / 1024:6.1f} -> {self.after.anon_kb / 1024:6.1f} MiB  "
            f"per request: RSS {rss:8.0f} B, anon {anon:8.0f} B  "
            f"wake-ups {self.base.wakeups_per_s:5.1f} -> {self.after.wakeups_per_s:5.1f}/s "
            f"({ratio:.2f}x)"
        )


def run_phase(
    name: str,
    orchestrator: Orchestrator,
    warm: Callable[[], Coroutine[Any, Any, Sent]],
    work: Callable[[], Coroutine[Any, Any, Sent]],
    count: int,
    window_s: float,
) -> tuple[Phase, Sent]:
    """A fresh orchestrator: warm-up, baseline, the work, measured again."""
    orchestrator.restart()
    asyncio.run(warm())
    base = measure_idle(orchestrator.proc.pid, window_s)
    before = orchestrator.snapshot(f"{name}-before")
    sent = asyncio.run(work())
    after = measure_idle(orchestrator.proc.pid, window_s)
    phase = Phase(name, base, after, count, sent.seconds)
    phase.print()
    kept = orchestrator.snapshot(f"{name}-after")
    if before is not None and kept is not None:
        top_kept(before, kept, count)
    return phase, sent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=2000, help="refunds of each kind")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--input-share", type=float, default=0.25, help="waiting for input")
    parser.add_argument("--window", type=float, default=10.0, help="idle seconds measured")
    parser.add_argument("--tracemalloc", type=Path, help="trace the orchestrator; snapshots here")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="accord-waiting-"))
    os.environ["ACCORD_DATA_DIR"] = str(data_dir)
    os.environ["ACCORD_JWT_SECRET"] = secrets.token_urlsafe(32)
    os.environ["ACCORD_RATE_LIMIT_PER_S"] = "0"  # one caller at full speed
    from accord.cli.mesh import free_ports, start_mesh
    from accord.protocol.auth import mint_token

    if args.tracemalloc:
        args.tracemalloc.mkdir(parents=True, exist_ok=True)
    mesh = start_mesh(data_dir, ports=free_ports())
    env = {**os.environ, **mesh.env()}
    if args.tracemalloc:
        env["ACCORD_BENCH_SNAPSHOT"] = str(args.tracemalloc.resolve() / LATEST)
    orchestrator = Orchestrator(mesh, env, args.tracemalloc)
    approver = mint_token(APPROVER, ["approver"])
    c = args.concurrency
    warm_each = 2 * c

    def database(service: str) -> str:
        return f"sqlite+aiosqlite:///{data_dir / f'{service}.db'}"

    try:
        n = 2 * warm_each + args.count  # of each kind: two warm-ups and a phase
        completing = asks_of(
            asyncio.run(seed_orders(database, n, first=FIRST_COMPLETING)), "completed"
        )
        large = asyncio.run(
            seed_orders(database, n, first=FIRST_WAITING, amount_cents=WAITING_CENTS)
        )
        warm_waiting = asks_of(large[: 2 * warm_each], "waiting", args.input_share)
        asks = asks_of(large[2 * warm_each :], "waiting", args.input_share)
        print(
            f"mesh of five processes, SQLite, {os.cpu_count()} CPUs, concurrency {c}, "
            f"window {args.window:.0f} s, {args.count} refunds of each kind"
            + (" (under tracemalloc)" if args.tracemalloc else "")
        )
        url = orchestrator.url
        # The orchestrator restarted with 0 workflows, idle: what the restarted row compares with.
        fresh_s = orchestrator.restart()
        fresh = measure_idle(orchestrator.proc.pid, args.window)

        def warm_up(phase: int) -> Callable[[], Coroutine[Any, Any, Sent]]:
            """The same mix in both phases, every path warmed: ``warm_each`` of each kind."""
            part = slice(phase * warm_each, (phase + 1) * warm_each)

            async def warm() -> Sent:
                return await send_all(url, completing[part] + warm_waiting[part], c)

            return warm

        done = completing[2 * warm_each :]
        completed, _ = run_phase(
            "completed",
            orchestrator,
            warm_up(0),
            lambda: send_all(url, done, c),
            args.count,
            args.window,
        )
        waiting, sent = run_phase(
            "waiting",
            orchestrator,
            warm_up(1),
            lambda: send_all(url, asks, c),
            args.count,
            args.window,
        )
        kinds = Counter({k: len(v) for k, v in sent.ids.items()})
        print(f"  (waiting: {kinds['approval']} for an approver, {kinds['input']} for input)")

        # Restarted with them all in the log: what a restart keeps per waiting workflow.
        restart_s = orchestrator.restart()
        restarted = measure_idle(orchestrator.proc.pid, args.window)
        in_log = args.count + 2 * warm_each
        print(
            f"restarted  with {in_log} waiting: to /readyz {restart_s:.1f} s (with 0: "
            f"{fresh_s:.1f} s), RSS {fresh.rss_kb / 1024:.1f} -> "
            f"{restarted.rss_kb / 1024:.1f} MiB, "
            f"anon {fresh.anon_kb / 1024:.1f} -> {restarted.anon_kb / 1024:.1f} MiB "
            f"({(restarted.anon_kb - fresh.anon_kb) * 1024 / in_log:.0f} B per waiting), "
            f"wake-ups {fresh.wakeups_per_s:.1f} -> {restarted.wakeups_per_s:.1f}/s"
        )
        print(asyncio.run(correctness(url, approver, sent.ids)))

        c_rss, c_anon = completed.per_request()
        w_rss, w_anon = waiting.per_request()
        extra = w_anon - c_anon
        print(
            f"per waiting request beyond a completed one: anon {extra:.0f} B "
            f"(waiting {w_anon:.0f} B, completed {c_anon:.0f} B), "
            f"RSS {w_rss - c_rss:.0f} B (waiting {w_rss:.0f} B, completed {c_rss:.0f} B): "
            + ("pass" if extra < TARGET_BYTES and w_rss - c_rss < TARGET_BYTES else "MISS")
            + f" (target < {TARGET_BYTES} B)"
        )
        idle = waiting.after.wakeups_per_s / max(waiting.base.wakeups_per_s, 0.01)
        print(
            f"idle wake-ups with {args.count} more waiting: {idle:.2f}x the phase's baseline: "
            + ("pass" if idle < 1.25 else "MISS")
            + " (target: nothing measurable, < 1.25x)"
        )
    finally:
        mesh.stop()


if __name__ == "__main__":
    main()
