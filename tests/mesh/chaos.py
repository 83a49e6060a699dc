"""Refunds flowing while services are killed (kill -9) or stopped (SIGTERM) and restarted.

Shared by tests/mesh/test_chaos.py (time-boxed for CI) and bench/chaos.py (the long run).
Every choice (which service, when) comes from one seeded ``random.Random``: the seed is
printed, so a failing run can be replayed with the same kills in the same order.

Customers are patient clients: one ``A2AClient`` each (card resolved once), which retries a
send that could not reach the orchestrator and follows its task across a restart. A request
is *accepted* once its task id is known (the first streamed event).
"""

from __future__ import annotations

import asyncio
import math
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

from accord.contracts.errors import AccordError
from accord.contracts.retry import RetryPolicy
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient, TaskView
from tests.mesh.support import SERVICES, Mesh, token

# (customer, text, whether it ends in a refund): O-1001 is refundable once (the first request
# refunds it, later ones - concurrent ones too - are answered already_refunded; each request
# is its own key, issue 13), O-1002 is outside the return window (no money moves). Small
# partial refunds would each count as a refund, and a customer with many is high risk.
REQUESTS: Final = (
    ("C-01", "I changed my mind, please refund order O-1001", True),
    ("C-01", "I changed my mind, please refund my running shoes, order O-1002", False),
)
REFUNDED: Final = "O-1001"
DENIED: Final = "O-1002"
MAX_DOWN: Final = 2
# A customer waits as long as its request's deadline: a start on two cores shared with other
# work took up to ~40 s here, plus a SIGTERM drain of up to ACCORD_SHUTDOWN_GRACE_S.
PATIENT: Final = RetryPolicy(
    max_attempts=None, base_delay_ms=100, max_delay_ms=2_000, deadline_ms=120_000
)


@dataclass
class Outcome:
    accepted: bool = False
    task_id: str = ""
    view: TaskView | None = None
    error: str | None = None


@dataclass
class Report:
    seed: int
    kills: Counter[str] = field(default_factory=Counter)
    start_s: dict[str, list[float]] = field(default_factory=dict)  # process start -> healthy
    resent: int = 0  # sends the customer repeated: the first broke before its task was known
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def accepted(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.accepted]

    @property
    def not_completed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.view is None or o.view.status is not Status.COMPLETED]

    def summary(self) -> str:
        kills = ", ".join(f"{n}={c}" for n, c in sorted(self.kills.items()))
        return (
            f"seed={self.seed} kills={sum(self.kills.values())} ({kills}) "
            f"requests={len(self.outcomes)} accepted={len(self.accepted)} "
            f"completed={len(self.outcomes) - len(self.not_completed)} "
            f"failed={len(self.not_completed)} resent={self.resent} start_s(median)="
            + ", ".join(
                f"{n}={sorted(v)[len(v) // 2]:.1f}" for n, v in sorted(self.start_s.items())
            )
        )


async def _client(mesh: Mesh, subject: str, deadline_s: float) -> A2AClient:
    """Resolve the card (the orchestrator may be restarting: try until the deadline)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            return await A2AClient.connect(mesh.orchestrator, token=token(subject), retry=PATIENT)
        except AccordError:
            if time.monotonic() > end:
                raise
            await asyncio.sleep(0.2)  # the orchestrator is restarting


async def _customer(mesh: Mesh, report: Report, rng: random.Random, stop: list[float]) -> None:
    subject = REQUESTS[0][0]
    async with await _client(mesh, subject, 60.0) as client:
        while time.monotonic() < stop[0]:
            _, text, _ = rng.choice(REQUESTS)
            outcome = Outcome()
            report.outcomes.append(outcome)

            def seen(view: TaskView, outcome: Outcome = outcome) -> None:
                outcome.accepted, outcome.task_id = True, view.task_id

            end = time.monotonic() + 120.0
            while True:
                try:
                    outcome.view = await client.send(
                        text=text, skill="refund.request", on_update=seen, deadline_s=120.0
                    )
                    break
                except AccordError as error:
                    outcome.error = f"{error.code.value}: {error.message}"
                    # The connection broke before the task was known: the client cannot tell
                    # whether it exists and never re-sends on its own; the customer sends again
                    # (safe: a refund is keyed by its order). Counted, and reported.
                    if outcome.accepted or time.monotonic() > end:
                        break
                    report.resent += 1


def _restart(mesh: Mesh, report: Report, name: str, sig: int) -> None:
    service = mesh.services[name]
    if sig == signal.SIGKILL:
        service.kill()
    else:
        service.stop()  # SIGTERM: its graceful shutdown
    started = time.monotonic()
    mesh.start(name)  # on the same data directory; waits for its health
    report.start_s.setdefault(name, []).append(time.monotonic() - started)


async def run_chaos(
    mesh: Mesh,
    *,
    seed: int,
    duration_s: float,
    every_s: float,
    customers: int = 3,
    sig: int = signal.SIGKILL,
    rolling: bool = False,
) -> Report:
    """Refunds for ``duration_s`` while a random service is killed about every ``every_s``
    and restarted at once (``rolling``: each service once, in turn, ``every_s`` apart, for as
    long as that takes); then wait for every request to end."""
    rng = random.Random(seed)
    report = Report(seed)
    print(f"chaos seed={seed}", flush=True)  # replay: run again with this seed
    # A rolling restart ends the flow when every service has been restarted once.
    stop = [math.inf if rolling else time.monotonic() + duration_s]
    flows = [
        asyncio.create_task(_customer(mesh, report, random.Random(rng.random()), stop))
        for _ in range(customers)
    ]
    if rolling:  # every service once, one at a time: the next goes down once the last is back
        for name in SERVICES:
            await asyncio.sleep(every_s)  # the chaos schedule itself
            await asyncio.to_thread(_restart, mesh, report, name, sig)
            report.kills[name] += 1
        stop[0] = time.monotonic()
    restarting: dict[str, asyncio.Task[None]] = {}
    while time.monotonic() < stop[0]:
        await asyncio.sleep(rng.uniform(0.5, 1.5) * every_s)  # the chaos schedule itself
        up = [n for n in SERVICES if n not in restarting or restarting[n].done()]
        if len(up) <= len(SERVICES) - MAX_DOWN:
            continue  # a start takes seconds on two busy cores: at most MAX_DOWN at once
        name = rng.choice(up)
        restarting[name] = asyncio.create_task(asyncio.to_thread(_restart, mesh, report, name, sig))
        report.kills[name] += 1
    await asyncio.gather(*restarting.values())
    await asyncio.gather(*flows)
    return report


def ledger_problems(
    report: Report, keys: dict[str, str], before: dict[str, str] | None = None
) -> list[str]:
    """What is wrong with the ledger after a run (``keys``: idempotency key -> order, every
    ``refund:`` row; ``before``: the same before the run, on a mesh used before): a refunded
    request without its row, a row of the denied order, more than one row of the order, or
    more new rows than refunded requests plus resends (a resent request is one of its own)."""
    problems = []
    if sum(1 for order in keys.values() if order == REFUNDED) > 1:
        problems.append(f"{REFUNDED} was paid more than once")
    keys = {k: v for k, v in keys.items() if k not in (before or {})}
    refunded = [
        o.view
        for o in report.outcomes
        if o.view is not None and (o.view.data or {}).get("decision") == "refunded"
    ]
    for view in refunded:
        key = ((view.data or {}).get("receipt") or {}).get("idempotency_key")
        if keys.get(str(key)) != REFUNDED:
            problems.append(f"task {view.task_id}: refunded, but no ledger row under {key}")
    rows = sum(1 for order in keys.values() if order == REFUNDED)
    if rows > len(refunded) + report.resent:
        problems.append(f"{rows} rows for {len(refunded)} refunds and {report.resent} resends")
    if DENIED in keys.values():
        problems.append(f"money moved for {DENIED}")
    return problems
