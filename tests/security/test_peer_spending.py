"""A peer's report of what it spent is checked (ENV-010).

Found against a running mesh (issue #30, finding 5): with policy-check's URL pointed at a proxy
that reported ``dev.accord/spent: -100000``, the orchestrator recorded it in the workflow log
and the request's budget no longer bound. Now what a child says it spent must be a
non-negative integer no larger than its grant; anything else is a CONTRACT_VIOLATION of that
child, counted as its whole grant spent. Real processes: the mesh, with a lying peer (a proxy
in front of the real policy-check, tests/support/spent_proxy.py) as the orchestrator's
policy-check.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import TaskView
from tests.mesh.money_support import ledger_sums
from tests.mesh.support import SERVICES, Mesh, ask, running_mesh
from tests.support.spent_proxy import lying_peer

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def mesh_without_orchestrator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    others = tuple(s for s in SERVICES if s != "orchestrator")
    with running_mesh(tmp_path_factory.mktemp("lying-peer"), services=others) as mesh:
        yield mesh


@pytest.fixture(params=[-100000, 10**6, 2.5, "lots"], ids=["negative", "above", "fraction", "text"])
def lied(
    request: pytest.FixtureRequest, mesh_without_orchestrator: Mesh, tmp_path: Path
) -> Iterator[tuple[Mesh, Any]]:
    """The mesh with an orchestrator whose policy-check reports ``request.param`` as spent."""
    mesh = mesh_without_orchestrator
    with lying_peer(mesh.url("policy"), request.param, mesh.log_dir) as peer:
        mesh.start("orchestrator", {"ACCORD_POLICY_URL": peer.url})
        try:
            yield mesh, request.param
        finally:
            mesh.services.pop("orchestrator").stop()


def _units_spent(mesh: Mesh, view: TaskView) -> int:
    return sum(
        int(data.get("spent", {}).get("units", 0))
        for _kind, data in mesh.workflow_events(view.task_id)
        if isinstance(data.get("spent"), dict)
    )


async def test_a_lying_peer_breaks_the_contract_and_is_charged_its_grant(
    lied: tuple[Mesh, Any],
) -> None:
    mesh, _value = lied
    before = ledger_sums(mesh).get("O-1001")
    view = await ask(mesh, "C-01", "I changed my mind, refund $10 of order O-1001")
    assert view.status is Status.FAILED, view
    assert view.error is not None
    assert view.error.code is ErrorCode.CONTRACT_VIOLATION, view.error
    assert view.error.details.get("requirement") == "ENV-010"
    assert ledger_sums(mesh).get("O-1001") == before  # nothing paid
    # The log never recorded the lie: the request's spending stays within its budget, with
    # policy-check's whole grant in it.
    spent = _units_spent(mesh, view)
    assert 0 < spent <= 100, spent
