"""Refunds ride out restarts: kill -9 of random services, and a rolling SIGTERM restart.

Real processes on one data directory (tests/mesh/support.py); each killed service is started
again at once. Asserted: every request completes (the patient client follows its task), the
ledger holds one row for the refunded order and none for the denied one, and no orchestrator
task is left non-terminal. The seed is printed (and in the assertion message) for replay;
``ACCORD_CHAOS_SEED`` picks it.
"""

from __future__ import annotations

import os
import random
import signal
from collections.abc import Iterator

import pytest

from accord.contracts.status import Status
from tests.mesh.chaos import DENIED, REFUNDED, Report, run_chaos
from tests.mesh.support import Mesh, get_task, running_mesh

pytestmark = pytest.mark.timeout(420)


@pytest.fixture
def chaos_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("chaos")) as mesh:
        yield mesh


def _seed() -> int:
    return int(os.environ.get("ACCORD_CHAOS_SEED") or random.SystemRandom().randrange(10**6))


async def _check(mesh: Mesh, report: Report) -> None:
    print(report.summary(), flush=True)
    why = [(o.task_id, o.error, o.view and o.view.error) for o in report.not_completed]
    assert not report.not_completed, (report.summary(), why)
    for outcome in report.outcomes:  # the task agrees with what its client saw: terminal
        view = await get_task(mesh, "C-01", outcome.task_id)
        assert view.status is Status.COMPLETED, (report.seed, outcome.task_id, view.status)
    rows = mesh.refund_rows()
    assert rows.get(REFUNDED) == 1, (report.summary(), rows)
    assert DENIED not in rows, (report.summary(), rows)


async def test_kill_9_of_any_service_while_refunds_flow(chaos_mesh: Mesh) -> None:
    report = await run_chaos(chaos_mesh, seed=_seed(), duration_s=45.0, every_s=3.0)
    await _check(chaos_mesh, report)
    assert sum(report.kills.values()) >= 8, report.summary()


async def test_rolling_restart_fails_no_request(chaos_mesh: Mesh) -> None:
    report = await run_chaos(
        chaos_mesh, seed=_seed(), duration_s=40.0, every_s=1.0, sig=signal.SIGTERM, rolling=True
    )
    await _check(chaos_mesh, report)
    assert set(report.kills) == {"commerce", "payments", "policy", "risk", "orchestrator"}
