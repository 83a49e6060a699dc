"""The cluster's single points fail too: PostgreSQL and HAProxy restarted under load (#35).

Shared by tests/mesh/test_cluster_single_points.py (the short run) and ``bench/cluster.py
single-points`` (the long one). The same customers as tests/mesh/cluster_support.py (refunds,
approvals, cancels, resumed subscriptions, every one a real client through the balancer) run
while, in turn:

- **PostgreSQL** is stopped (``pg_ctl stop -m fast``, then ``-m immediate``: no shutdown
  checkpoint, crash recovery at the next start), left down for ``outage_s``, and started again
  on the same port and data;
- **HAProxy** is killed (SIGKILL, then SIGTERM: its hard stop); `accord cluster` starts it
  again on the same ports.

The promises: every request in flight completes or ends with a contract error whose registry
meaning is retry (UNAVAILABLE, RETRYABLE_TIMEOUT); every 5xx a client sees is such an error
(never a bare status or an HTML page); no refund is paid twice; every task ends; and the
cluster serves again by itself (every frontend ready again), in the time printed.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import httpx

from tests.mesh.cluster_support import Cluster, Report, _check_tasks, _customer, nearest_rank
from tests.mesh.support import SERVICES
from tests.support.postgres import Server

RETRYABLE: Final = frozenset({"UNAVAILABLE", "RETRYABLE_TIMEOUT"})
SERVING_DEADLINE_S: Final = 60.0
# What happens, in turn, about every ``every_s`` seconds.
HITS: Final = ("postgres fast", "balancer SIGKILL", "postgres immediate", "balancer SIGTERM")


@dataclass
class SinglePointsReport(Report):
    # "postgres fast" -> seconds from the moment it was back (or killed, for the balancer)
    # until every frontend answered ready again; None: not within SERVING_DEADLINE_S.
    recoveries: list[tuple[str, float | None]] = field(default_factory=list)

    @property
    def retryable_failures(self) -> list[str]:
        return [o.error or "" for o in self.failed if _code_of(o.error) in RETRYABLE]

    def figures(self) -> str:
        again = [s for _, s in self.recoveries if s is not None]
        hits = ", ".join(
            f"{what}: {'never' if s is None else f'{s:.1f}s'}" for what, s in self.recoveries
        )
        return "\n".join(
            [
                super().figures(),
                f"single points hit={len(self.recoveries)} serving again after: {hits}",
                f"serving again max={max(again, default=0.0):.1f}s "
                f"p50={nearest_rank(again, 50):.1f}s",
                f"requests ended with a retryable error={len(self.retryable_failures)}; "
                f"5xx by body: {dict(sorted(self.server_error_bodies.items())) or '{}'}",
                *(f"  {o.flow} {o.task_id}: {o.error}" for o in self.failed),
            ]
        )

    async def problems(self, cluster: Cluster) -> list[str]:
        """Like :meth:`Report.problems`, but a request may end with a retryable contract error
        and a client may see the contract's retryable 5xx (the database was down)."""
        out = [
            f"{o.flow} {o.task_id or '(no task)'}: {o.error}"
            for o in self.failed
            if _code_of(o.error) not in RETRYABLE
        ]
        out += [
            f"{n} x {body}"
            for body, n in self.server_error_bodies.items()
            if body.startswith("untyped")
        ]
        out += [f"not serving again: {what}" for what, s in self.recoveries if s is None]
        out += [f"not finished: {t}" for t in self.unfinished]
        out += self.disagreements
        from tests.mesh.cluster_support import double_refunds

        out += await double_refunds(cluster.database_url)
        return out


def _code_of(error: str | None) -> str:
    return (error or "").split(":", 1)[0]


def serving(cluster: Cluster) -> bool:
    """Whether every frontend answers its readiness check through the balancer now."""
    try:
        return all(
            httpx.get(cluster.url(name) + "/readyz", timeout=2.0).status_code == 200
            for name in SERVICES
        )
    except httpx.HTTPError:
        return False


def _serving_again(cluster: Cluster, since: float) -> float | None:
    end = time.monotonic() + SERVING_DEADLINE_S
    while time.monotonic() < end:
        if serving(cluster):
            return time.monotonic() - since
        time.sleep(0.1)  # polling the balancer, bounded by the deadline
    return None


def restart_postgres(cluster: Cluster, server: Server, mode: str, outage_s: float) -> float | None:
    """Stop PostgreSQL (``mode``), keep it down ``outage_s``, start it on the same port and
    data; the seconds until the cluster serves again."""
    server.stop(mode)
    time.sleep(outage_s)  # the outage itself
    server.start()
    return _serving_again(cluster, time.monotonic())


def kill_balancer(cluster: Cluster, sig: signal.Signals) -> float | None:
    """Signal HAProxy; the seconds until `accord cluster` has a new one serving."""
    pid = int(cluster.state()["balancer"]["pid"])
    killed = time.monotonic()
    os.kill(pid, sig)
    end = killed + SERVING_DEADLINE_S
    while int(cluster.state()["balancer"]["pid"] or 0) in (0, pid):
        if time.monotonic() > end:
            return None
        time.sleep(0.05)  # polling cluster.json, bounded by the deadline
    return _serving_again(cluster, killed)


def hitter(cluster: Cluster, server: Server, outage_s: float) -> Callable[[str], float | None]:
    def hit(what: str) -> float | None:
        target, how = what.split(" ", 1)
        if target == "postgres":
            return restart_postgres(cluster, server, how, outage_s)
        return kill_balancer(cluster, signal.Signals[how])

    return hit


async def single_points(
    cluster: Cluster,
    server: Server,
    *,
    seed: int,
    duration_s: float,
    every_s: float,
    outage_s: float = 3.0,
    flows: int = 3,
    settle_s: float = 60.0,
) -> SinglePointsReport:
    """``flows`` customers for ``duration_s`` while PostgreSQL and HAProxy are restarted in
    turn (:data:`HITS`) about every ``every_s``; then every task must end within ``settle_s``."""
    rng = random.Random(seed)
    report = SinglePointsReport(seed)
    print(f"single points seed={seed}", flush=True)
    hit = hitter(cluster, server, outage_s)
    tasks: set[str] = set()
    stop_at = time.monotonic() + duration_s
    customers = [
        asyncio.create_task(_customer(cluster, report, random.Random(rng.random()), stop_at, tasks))
        for _ in range(flows)
    ]
    turn = 0
    while time.monotonic() < stop_at or turn < len(HITS):  # every single point, at least once
        await asyncio.sleep(rng.uniform(0.5, 1.5) * every_s)  # the schedule itself
        what = HITS[turn % len(HITS)]
        turn += 1
        report.kills[what] += 1
        report.recoveries.append((what, await asyncio.to_thread(hit, what)))
    await asyncio.gather(*customers)
    await _check_tasks(cluster, report, sorted(tasks), settle_s)
    return report
