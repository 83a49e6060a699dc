"""The cluster under fire: customers and approvers talk to HAProxy while replicas die.

Shared by tests/mesh/test_cluster.py (the short run) and bench/cluster.py (the long one).
``running_cluster`` starts `accord cluster` (two replicas of each of the five services behind
HAProxy, on one PostgreSQL database) as the user would, on ports of the test's own;
``under_fire`` runs flows of customers through the balancer while a seeded schedule kills a
replica (SIGKILL) or rolls it (SIGTERM, its graceful drain), never both replicas of one service
at once; the cluster starts each again, as a Deployment restarts a pod.

What a flow does, each a real client (``A2AClient``, the card read through the balancer):

- ``refund``: C-01 asks for O-1001 (refundable once: later requests are answered that it was
  refunded already): the task completes;
- ``approval``: C-03 asks for O-1004 (high risk: waits for an approver), an approver approves
  it: the task completes (or completes at once: already refunded);
- ``cancel``: C-04 asks for O-1006 (waits for an approver), then cancels it: failed/CANCELED;
- ``subscribe``: C-01 asks for O-1001 streaming, drops the stream after its first note (as a
  client whose connection broke does) and subscribes again through the balancer from the last
  event it saw (``SubscribeToTask``, ``Last-Event-ID``): the task completes, no event twice.

Every response the clients get is recorded by status (an httpx hook): a 5xx that reached a
client is counted, even when the client retried it away. A failed request is a call that
raised after the client's own retries (idempotent sends) or a task that ended otherwise than
its flow expects.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import asyncpg
import httpx

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import RetryClass, RetryPolicy
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from tests.mesh.support import SECRET, SERVICES, token
from tests.support.processes import free_port

REPLICAS: Final = 2
START_DEADLINE_S: Final = 240.0
# Short leases and worker TTLs: a killed replica's work is taken over in seconds. A SIGTERM's
# drain is short too, so that a roll at the fast pace does not wait 20 s for a stream.
CLUSTER_ENV: Final = {
    "ACCORD_WORKFLOW_LEASE_TTL_S": "4",
    "ACCORD_TASK_WORKER_TTL_S": "4",
    "ACCORD_SHUTDOWN_GRACE_S": "3",
    # The resume test's order (O-1005, which no flow of under_fire touches) stops for a few
    # seconds just before its refund is issued: the replica streaming it is killed there.
    "ACCORD_DEV": "1",
    "ACCORD_TEST_PAUSE": "refund.before_issue@O-1005:4",
}
# A customer is patient: every retryable failure is retried until its deadline.
PATIENT: Final = RetryPolicy(
    max_attempts=None, base_delay_ms=100, max_delay_ms=2_000, deadline_ms=90_000
)
FLOW_DEADLINE_S: Final = 90.0
APPROVER: Final = ("approver-1", "approver")


@dataclass
class Cluster:
    root: Path
    database_url: str
    ports: dict[str, int]
    process: subprocess.Popen[bytes]
    log_path: Path

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.ports[service]}"

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads((self.root / "cluster" / "cluster.json").read_text())
        return state

    def replicas(self, service: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.state()["replicas"] if service in (None, r["service"])]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def running_cluster(base: Path, database_url: str) -> Iterator[Cluster]:
    """`accord cluster` on ``database_url``, on ports of its own, until the block ends."""
    ports = {name: free_port() for name in SERVICES}
    replica_ports = [free_port() for _ in range(len(SERVICES) * REPLICAS)]
    data = base / "data"
    log_path = base / "cluster.log"
    env = {
        **os.environ,
        **CLUSTER_ENV,
        "ACCORD_DATA_DIR": str(data),
        "ACCORD_DATABASE_URL": database_url,
        "ACCORD_JWT_SECRET": SECRET,
        **{f"ACCORD_{n.upper()}_URL": f"http://127.0.0.1:{p}" for n, p in ports.items()},
    }
    command = [
        sys.executable,
        "-m",
        "accord.cli.main",
        "cluster",
        "--replicas",
        str(REPLICAS),
        "--replica-ports",
        ",".join(map(str, replica_ports)),
        "--deadline",
        str(START_DEADLINE_S),
    ]
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    cluster = Cluster(data, database_url, ports, process, log_path)
    try:
        end = time.monotonic() + START_DEADLINE_S + 10
        while "ready; Ctrl-C stops" not in cluster.log():
            if process.poll() is not None:
                raise RuntimeError(f"accord cluster exited {process.returncode}:\n{cluster.log()}")
            if time.monotonic() > end:
                raise TimeoutError(f"accord cluster not ready:\n{cluster.log()[-4000:]}")
            time.sleep(0.2)  # polling its output, bounded by the deadline
        yield cluster
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # it stops its replicas and the balancer
            try:
                process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


@dataclass
class Outcome:
    flow: str
    task_id: str = ""
    final: TaskView | None = None
    error: str | None = None  # why the customer's request failed, if it did
    seconds: float = 0.0


@dataclass
class Report:
    seed: int
    outcomes: list[Outcome] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)  # every HTTP answer a client got
    kills: Counter[str] = field(default_factory=Counter)  # "SIGKILL policy" -> count
    unfinished: list[str] = field(default_factory=list)  # task: its state after the run
    disagreements: list[str] = field(default_factory=list)  # a replica read a task otherwise
    restarts: int = 0  # replicas the cluster started again (read from cluster.json)
    # Every 5xx a client got, by what its body says: "UNAVAILABLE" (a contract error whose
    # registry meaning is retry), else "untyped 502 <body>" (a bare status, HTML, ...).
    server_error_bodies: Counter[str] = field(default_factory=Counter)
    resumed: int = 0  # streams dropped and resumed through the balancer (``subscribe``)

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.error is not None]

    @property
    def server_errors(self) -> int:
        return sum(n for code, n in self.statuses.items() if code >= 500)

    def figures(self) -> str:
        seconds = sorted(o.seconds for o in self.outcomes if o.error is None)
        by_flow = Counter(o.flow for o in self.outcomes)
        failures = Counter((o.error or "").split(":", 1)[0] for o in self.failed)
        return "\n".join(
            [
                f"seed={self.seed}",
                f"requests={len(self.outcomes)} ("
                + ", ".join(f"{k}={v}" for k, v in sorted(by_flow.items()))
                + ")",
                f"failed={len(self.failed)} by code: {dict(failures) or '{}'}",
                f"http statuses seen by clients: {dict(sorted(self.statuses.items()))} "
                f"(5xx={self.server_errors})",
                f"kills={sum(self.kills.values())}: {dict(sorted(self.kills.items()))} "
                f"restarts={self.restarts}",
                f"resumed streams={self.resumed} "
                f"unfinished={len(self.unfinished)} disagreements={len(self.disagreements)}",
                f"latency p50={nearest_rank(seconds, 50):.2f}s "
                f"p95={nearest_rank(seconds, 95):.2f}s",
            ]
        )

    async def problems(self, cluster: Cluster) -> list[str]:
        """Everything that broke a promise; empty when the run kept them all."""
        out = [f"{o.flow} {o.task_id or '(no task)'}: {o.error}" for o in self.failed]
        if self.server_errors:
            out.append(f"{self.server_errors} responses with a 5xx reached the clients")
        out += [f"not finished: {t}" for t in self.unfinished]
        out += self.disagreements
        out += await double_refunds(cluster.database_url)
        return out


def typed_retryable(status: int, body: bytes) -> str:
    """A 5xx's contract code when its body is a contract error the registry says to retry,
    else ``untyped STATUS BODY``: what a client could not act on."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and error.get("retry") == "retry" and "code" in error:
        return str(error["code"])
    return f"untyped {status} {body[:60]!r}"


def nearest_rank(values: list[float], percent: int) -> float:
    if not values:
        return 0.0
    rank = max(1, -(-percent * len(values) // 100))  # ceil(p/100 * n)
    return sorted(values)[rank - 1]


async def double_refunds(database_url: str) -> list[str]:
    """A key paid twice, or an order paid beyond its total: the ledger's promises."""
    conn = await asyncpg.connect(database_url)
    try:
        keys = await conn.fetch(
            "SELECT idempotency_key, count(*) AS n FROM payments_refunds "
            "GROUP BY idempotency_key HAVING count(*) > 1"
        )
        orders = await conn.fetch(
            "SELECT r.order_id, sum(r.amount_cents) AS paid, min(o.total_cents) AS total "
            "FROM payments_refunds r JOIN payments_orders o ON o.order_id = r.order_id "
            "GROUP BY r.order_id HAVING sum(r.amount_cents) > min(o.total_cents)"
        )
    finally:
        await conn.close()
    return [f"key {r['idempotency_key']} paid {r['n']} times" for r in keys] + [
        f"order {r['order_id']} paid {r['paid']} of {r['total']}" for r in orders
    ]


@asynccontextmanager
async def client_for(
    cluster: Cluster, report: Report, subject: str, *roles: str
) -> AsyncIterator[A2AClient]:
    """A client of the orchestrator through the balancer; every answer's status recorded."""

    async def record(response: httpx.Response) -> None:
        report.statuses[response.status_code] += 1
        if response.status_code >= 500:
            # Small, and read once: the client then reads the same bytes from the response.
            report.server_error_bodies[
                typed_retryable(response.status_code, await response.aread())
            ] += 1

    http = httpx.AsyncClient(timeout=30.0, event_hooks={"response": [record]})
    try:
        client = await A2AClient.connect(
            cluster.url("orchestrator"),
            token=token(subject, *roles) if roles else token(subject),
            retry=PATIENT,
            http=http,
        )
        async with client:
            yield client
    finally:
        await http.aclose()


async def _refund(cluster: Cluster, report: Report, outcome: Outcome) -> None:
    async with client_for(cluster, report, "C-01") as c:
        view = await c.send(
            text="I changed my mind, please refund order O-1001",
            skill="refund.request",
            deadline_s=FLOW_DEADLINE_S,
        )
    outcome.task_id, outcome.final = view.task_id, view
    if view.status is not Status.COMPLETED:
        outcome.error = f"{_code(view)}: refund ended {view.status.value}"


async def _approval(cluster: Cluster, report: Report, outcome: Outcome) -> None:
    async with client_for(cluster, report, "C-03") as c:
        view = await c.send(
            text="I changed my mind about the laptop, refund order O-1004",
            skill="refund.request",
            deadline_s=FLOW_DEADLINE_S,
        )
        outcome.task_id = view.task_id
        if view.waiting_reason is WaitingReason.APPROVAL:
            async with client_for(cluster, report, *APPROVER) as approver:
                decided = await approver.send(
                    data={"task_id": view.task_id, "decision": "approve"},
                    skill="refund.approve",
                    deadline_s=FLOW_DEADLINE_S,
                )
            if decided.status is not Status.COMPLETED:
                outcome.error = f"{_code(decided)}: the approval ended {decided.status.value}"
                return
            view = await _settled(c, view.task_id)
    outcome.final = view
    if view.status is not Status.COMPLETED:
        outcome.error = f"{_code(view)}: approved refund ended {view.status.value}"


async def _cancel(cluster: Cluster, report: Report, outcome: Outcome) -> None:
    async with client_for(cluster, report, "C-04") as c:
        view = await c.send(
            text="please refund order O-1006, I changed my mind",
            skill="refund.request",
            deadline_s=FLOW_DEADLINE_S,
        )
        outcome.task_id = view.task_id
        if view.waiting_reason is not WaitingReason.APPROVAL:
            outcome.final = view
            outcome.error = f"{_code(view)}: expected to wait for approval, {view.status.value}"
            return
        canceled = await _cancel_until_answered(c, view.task_id)
        outcome.final = canceled
        if canceled.error is None or canceled.error.code is not ErrorCode.CANCELED:
            outcome.error = f"{_code(canceled)}: cancel ended {canceled.status.value}"


async def _cancel_until_answered(client: A2AClient, task_id: str) -> TaskView:
    """Cancel as a careful customer does: a cancel that failed with a retryable error (the
    balancer died with it: its fate is unknown) is followed by a read of the task, and sent
    again only if the task still waits; a cancel refused because the task ended is that
    task's state."""
    end = time.monotonic() + FLOW_DEADLINE_S
    while True:
        try:
            return await client.cancel(task_id)
        except AccordError as error:
            if error.code is ErrorCode.TASK_NOT_CANCELABLE:
                return await client.get(task_id)  # the first cancel got there
            if error.retry_class is not RetryClass.RETRY or time.monotonic() > end:
                raise
        view = await client.get(task_id)
        if view.status not in (Status.QUEUED, Status.RUNNING, Status.WAITING):
            return view
        await asyncio.sleep(0.5)  # backing off before the next cancel, bounded by the deadline


async def _subscribe(cluster: Cluster, report: Report, outcome: Outcome) -> None:
    views: list[TaskView] = []
    async with client_for(cluster, report, "C-01") as c:
        stream = c.stream(
            text="I changed my mind, please refund order O-1001", skill="refund.request"
        )
        async with aclosing(stream) as updates:
            async for view in updates:
                views.append(view)
                if view.event_id or view.is_interrupted:
                    break  # the connection "breaks" here: the stream is closed
        outcome.task_id = views[-1].task_id
        if not views[-1].is_interrupted:
            report.resumed += 1
            after = next((v.event_id for v in reversed(views) if v.event_id), None)
            async with aclosing(c.subscribe(outcome.task_id, after=after)) as resumed:
                async for view in resumed:
                    views.append(view)
    outcome.final = views[-1]
    keys = [(v.event_id, len(v.artifacts)) for v in views if v.event_id]
    if len(keys) != len(set(keys)):
        outcome.error = f"DUPLICATE_EVENT: {keys}"
    elif outcome.final.status is not Status.COMPLETED:
        outcome.error = f"{_code(outcome.final)}: resumed refund ended {outcome.final.status.value}"


async def _settled(client: A2AClient, task_id: str) -> TaskView:
    """The task once it stops running (an approval resumes it on whichever replica)."""
    end = time.monotonic() + FLOW_DEADLINE_S
    view = await client.get(task_id)
    while view.status in (Status.QUEUED, Status.RUNNING) and time.monotonic() < end:
        await asyncio.sleep(0.2)
        view = await client.get(task_id)
    return view


def _code(view: TaskView) -> str:
    return view.error.code.value if view.error is not None else view.status.value.upper()


FLOWS: Final = {
    "refund": _refund,
    "approval": _approval,
    "cancel": _cancel,
    "subscribe": _subscribe,
}


async def _customer(
    cluster: Cluster, report: Report, rng: random.Random, stop_at: float, tasks: set[str]
) -> None:
    while time.monotonic() < stop_at:
        name = rng.choice(sorted(FLOWS))
        outcome = Outcome(name)
        report.outcomes.append(outcome)
        started = time.monotonic()
        try:
            await asyncio.wait_for(FLOWS[name](cluster, report, outcome), FLOW_DEADLINE_S + 30)
        except TimeoutError:
            outcome.error = f"TIMEOUT: the {name} flow did not end in time"
        except AccordError as error:
            outcome.error = f"{error.code.value}: {error.message}"
        outcome.seconds = time.monotonic() - started
        if outcome.task_id:
            tasks.add(outcome.task_id)


def _sibling_ready(cluster: Cluster, replica: dict[str, Any]) -> bool:
    """Whether every other replica of ``replica``'s service answers /readyz now."""
    for other in cluster.replicas(replica["service"]):
        if other["name"] == replica["name"]:
            continue
        try:
            if httpx.get(other["url"] + "/readyz", timeout=2.0).status_code != 200:
                return False
        except httpx.HTTPError:
            return False
    return True


def _hit(cluster: Cluster, rng: random.Random, report: Report) -> None:
    """Kill (SIGKILL) or roll (SIGTERM) one replica whose sibling is ready."""
    candidates = [r for r in cluster.replicas() if r["pid"]]
    rng.shuffle(candidates)
    sig = rng.choice((signal.SIGKILL, signal.SIGTERM))
    for replica in candidates:
        if not _sibling_ready(cluster, replica):
            continue
        try:
            os.killpg(replica["pid"], sig)
        except ProcessLookupError:
            continue
        report.kills[f"{sig.name} {replica['service']}"] += 1
        return


async def under_fire(
    cluster: Cluster,
    *,
    seed: int,
    duration_s: float,
    every_s: float,
    flows: int = 3,
    settle_s: float = 60.0,
) -> Report:
    """``flows`` customers for ``duration_s`` while a replica is hit about every ``every_s``;
    then every task they made must end (within ``settle_s``) and read the same through every
    replica."""
    rng = random.Random(seed)
    report = Report(seed)
    print(f"cluster chaos seed={seed}", flush=True)  # replay: the same seed, the same hits
    tasks: set[str] = set()
    stop_at = time.monotonic() + duration_s
    customers = [
        asyncio.create_task(_customer(cluster, report, random.Random(rng.random()), stop_at, tasks))
        for _ in range(flows)
    ]
    while time.monotonic() < stop_at:
        await asyncio.sleep(rng.uniform(0.5, 1.5) * every_s)  # the chaos schedule itself
        await asyncio.to_thread(_hit, cluster, rng, report)
    await asyncio.gather(*customers)
    await _check_tasks(cluster, report, sorted(tasks), settle_s)
    report.restarts = sum(r["starts"] - 1 for r in cluster.replicas())
    return report


OWNERS: Final = {"refund": "C-01", "approval": "C-03", "cancel": "C-04", "subscribe": "C-01"}


async def _check_tasks(
    cluster: Cluster, report: Report, task_ids: list[str], settle_s: float
) -> None:
    """Every task ends within ``settle_s``, and every replica reads it alike."""
    owner = {o.task_id: OWNERS[o.flow] for o in report.outcomes if o.task_id}
    end = time.monotonic() + settle_s
    async with httpx.AsyncClient(timeout=10.0) as http:
        for task_id in task_ids:
            headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {token(owner[task_id])}"}
            states: dict[str, str] = {}
            while True:
                states = {}
                for replica in cluster.replicas("orchestrator"):
                    states[replica["name"]] = await _state(http, replica["url"], task_id, headers)
                done = all(s in TERMINAL_STATES for s in states.values())
                if (done and len(set(states.values())) == 1) or time.monotonic() > end:
                    break
                await asyncio.sleep(0.5)
            if not all(s in TERMINAL_STATES for s in states.values()):
                report.unfinished.append(f"{task_id} {states}")
            elif len(set(states.values())) != 1:
                report.disagreements.append(f"replicas read {task_id} differently: {states}")


TERMINAL_STATES: Final = frozenset(
    {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
)


async def _state(http: httpx.AsyncClient, url: str, task_id: str, headers: dict[str, str]) -> str:
    """The task's state read on one replica directly (past the balancer); a replica that is
    restarting is asked again until it answers."""
    for _ in range(60):
        try:
            answer = await http.get(f"{url}/tasks/{task_id}", headers=headers)
            if answer.status_code == 200:
                return str(answer.json()["status"]["state"])
            return f"HTTP {answer.status_code}"
        except httpx.HTTPError:
            await asyncio.sleep(0.5)  # the replica is restarting
    return "no answer"
