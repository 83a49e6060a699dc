"""The main routes with every store on PostgreSQL (task stores, workflow log, ledgers), and a
kill -9 while an approval waits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from accord.contracts.status import Status, WaitingReason
from tests.mesh.support import Mesh, answer, approve, ask, running_mesh, until
from tests.support import postgres

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def pg_mesh(tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str) -> Iterator[Mesh]:
    url = postgres.fresh_database(postgres_server_url)
    with running_mesh(tmp_path_factory.mktemp("pgmesh"), database_url=url) as mesh:
        yield mesh


async def test_routes_on_postgresql(pg_mesh: Mesh) -> None:
    mesh = pg_mesh
    refunded = await ask(mesh, "C-01", "鞋码不合适，想退款，订单 O-1001")
    assert (refunded.data or {})["decision"] == "refunded"

    explained = await ask(mesh, "C-01", "The shoes from order O-1002 are too small")
    assert (explained.data or {})["rule"] == "outside_window"

    asked = await ask(mesh, "C-01", "my mug arrived broken, order O-1005")
    assert asked.waiting_reason is WaitingReason.INPUT
    done = await answer(mesh, "C-01", asked, "the handle snapped off, photo IMG_2291.jpg")
    assert (done.data or {})["decision"] == "refunded"


async def test_approval_survives_kill_9_on_postgresql(pg_mesh: Mesh) -> None:
    mesh = pg_mesh
    view = await ask(mesh, "C-03", "I changed my mind, please refund order O-1004")
    assert view.waiting_reason is WaitingReason.APPROVAL
    mesh.restart_orchestrator()  # SIGKILL and start again on the same database
    waiting = await until(mesh, "C-03", view.task_id, Status.WAITING)
    assert waiting.waiting_reason is WaitingReason.APPROVAL
    decided = await approve(mesh, "approver-1", ("approver",), view.task_id)
    assert decided.status is Status.COMPLETED, decided.error
    final = await until(mesh, "C-03", view.task_id, Status.COMPLETED)
    assert (final.data or {})["approved_by"] == "approver-1"
