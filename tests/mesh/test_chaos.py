"""Refunds ride out restarts: kill -9 of random services, and a rolling SIGTERM restart.

Real processes on one data directory (tests/mesh/support.py); each killed service is started
again at once. Asserted: every request completes (the patient client follows its task), the
ledger holds one row for the refunded order and none for the denied one, and no orchestrator
task is left non-terminal. The seed is printed (and in the assertion message) for replay;
``ACCORD_CHAOS_SEED`` picks it.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Iterator

import httpx
import pytest

from accord.contracts.status import Status
from tests.mesh.chaos import Report, ledger_problems, run_chaos
from tests.mesh.support import Mesh, ask, get_task, running_mesh

pytestmark = pytest.mark.timeout(420)


@pytest.fixture(scope="module")
def chaos_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("chaos")) as mesh:
        yield mesh


def _seed() -> int:
    return int(os.environ.get("ACCORD_CHAOS_SEED") or random.SystemRandom().randrange(10**6))


async def _check(mesh: Mesh, report: Report, before: dict[str, str]) -> None:
    print(report.summary(), flush=True)
    # Only the schedule stops a service: one that ended by itself (a crash, a signal) is the
    # cause of whatever went unanswered, so it is named first.
    ended = {n: code for n, s in mesh.services.items() if (code := s.process.poll()) is not None}
    assert not ended, (report.summary(), f"ended by themselves (exit status): {ended}")
    why = [(o.task_id, o.error, o.view and o.view.error) for o in report.not_completed]
    assert not report.not_completed, (report.summary(), why)
    for outcome in report.outcomes:  # the task agrees with what its client saw: terminal
        view = await get_task(mesh, "C-01", outcome.task_id)
        assert view.status is Status.COMPLETED, (report.seed, outcome.task_id, view.status)
    # One ledger row per refunded request, none for the denied order (tests/mesh/chaos.py).
    assert not ledger_problems(report, mesh.refund_keys(), before), report.summary()


async def test_kill_9_of_any_service_while_refunds_flow(chaos_mesh: Mesh) -> None:
    before = chaos_mesh.refund_keys()
    # The suite's short run (about ten kills); bench/chaos.py is the long one (`make chaos`).
    report = await run_chaos(chaos_mesh, seed=_seed(), duration_s=20.0, every_s=2.0)
    await _check(chaos_mesh, report, before)
    assert sum(report.kills.values()) >= 4, report.summary()


async def test_rolling_restart_fails_no_request(chaos_mesh: Mesh) -> None:
    before = chaos_mesh.refund_keys()
    report = await run_chaos(
        chaos_mesh, seed=_seed(), duration_s=0.0, every_s=1.0, sig=signal.SIGTERM, rolling=True
    )
    await _check(chaos_mesh, report, before)
    assert set(report.kills) == {"commerce", "payments", "policy", "risk", "orchestrator"}


async def _degraded(mesh: Mesh, deadline_s: float = 60.0) -> list[str]:
    """Poll the orchestrator's /readyz until it names a degraded dependency."""
    end = time.monotonic() + deadline_s
    async with httpx.AsyncClient(timeout=5) as http:
        while time.monotonic() < end:
            body = (await http.get(mesh.orchestrator + "/readyz")).json()
            if body.get("degraded"):
                return list(body["degraded"])
            await asyncio.sleep(0.1)  # polling, bounded by the deadline
    raise TimeoutError("the orchestrator never reported a degraded dependency")


async def test_a_refund_waits_out_a_tool_server_down_for_many_seconds(chaos_mesh: Mesh) -> None:
    """Commerce is down far longer than a client's own retries last: the workflow's durable
    backoff waits it out, /readyz names it meanwhile, and the refund completes once it is back."""
    mesh = chaos_mesh
    mesh.services["commerce"].kill()
    asking = asyncio.create_task(
        ask(mesh, "C-01", "I changed my mind, please refund my running shoes, order O-1002")
    )
    assert "mcp:commerce" in await _degraded(mesh)
    assert not asking.done()  # still waiting, not failed
    await asyncio.to_thread(mesh.start, "commerce")
    view = await asking
    assert view.status is Status.COMPLETED, view.error
    async with httpx.AsyncClient(timeout=5) as http:
        end = time.monotonic() + 30
        while (await http.get(mesh.orchestrator + "/readyz")).json().get("degraded"):
            assert time.monotonic() < end, "a degraded dependency never recovered"
            await asyncio.sleep(0.1)  # polling, bounded by the deadline
