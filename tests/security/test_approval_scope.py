"""Approvals are scoped to the approver's app, and nobody approves their own refund.

Found against a running mesh (issue #12): an approver token of another app (``app: shop``)
listed app ``accord``'s approval queue (customer, order, amount) and approved its refunds, and a
customer holding the approver role in another app approved their own refund. The rule now
(docs/security-a2a.md): the queue (``GET /approvals``, ``accord tasks``) and the
``refund.approve`` skill see only the approver's own app; another app's refund is NOT_FOUND,
with nothing of it in the answer; an approver never decides a refund whose customer is
themselves. Real processes: the five services of one mesh.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.auth import mint_token
from tests.mesh.mesh_support import Mesh, mesh_for_module
from tests.mesh.support import SECRET, ask, get_task

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(300)

SHOP: str = "shop"


def _token(subject: str, *roles: str, app: str = "accord") -> str:
    return mint_token(subject, roles, app=app, secret=SECRET)


async def _decide(mesh: Mesh, bearer: str, task_id: str) -> TaskView:
    async with await A2AClient.connect(mesh.orchestrator, token=bearer) as client:
        return await client.send(
            data={"task_id": task_id, "decision": "approve"}, skill="refund.approve"
        )


async def _refused(mesh: Mesh, bearer: str, task_id: str) -> AccordError:
    """A refused approval is an error answer: no task is made, none is listed (issue #36)."""
    with pytest.raises(AccordError) as refused:
        await _decide(mesh, bearer, task_id)
    return refused.value


def _queue(mesh: Mesh, bearer: str) -> httpx.Response:
    return httpx.get(
        mesh.orchestrator + "/approvals",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {bearer}"},
        timeout=30,
    )


def _accord(mesh: Mesh, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accord.cli.main", *args],
        env={**os.environ, **mesh.env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
async def waiting(mesh_for_module: Mesh) -> str:
    """A refund of C-03's laptop (O-1004, high risk by amount) waiting for an approver; each
    test asks again (a refund waiting for approval has paid nothing, so they never interfere),
    and none of them approves it."""
    view = await ask(mesh_for_module, "C-03", "I changed my mind, refund order O-1004")
    assert view.status is Status.WAITING, view
    assert view.waiting_reason is WaitingReason.APPROVAL
    return view.task_id


def _leaks(body: Any) -> bool:
    text = json.dumps(body)
    return any(fact in text for fact in ("C-03", "O-1004", "129900"))


async def test_another_apps_approver_sees_no_queue_item_and_gets_not_found(
    mesh_for_module: Mesh, waiting: str
) -> None:
    shop = _token("approver-9", "approver", app=SHOP)
    listed = _queue(mesh_for_module, shop)
    assert listed.status_code == 200
    assert waiting not in json.dumps(listed.json())
    assert not _leaks(listed.json()), listed.json()

    decided = await _refused(mesh_for_module, shop, waiting)
    assert decided.code is ErrorCode.NOT_FOUND
    assert not _leaks(decided.to_dict())
    # The same answer as a task that does not exist: nothing tells the two apart.
    missing = await _refused(mesh_for_module, shop, "no-such-task")
    assert (missing.code, missing.message) == (decided.code, decided.message)
    # And the approver's own list holds no trace of either refusal.
    listed = _accord(mesh_for_module, "tasks", "--token", shop, "--json")
    assert json.loads(listed.stdout.strip().splitlines()[-1]) == []

    still = await get_task(mesh_for_module, "C-03", waiting)
    assert still.status is Status.WAITING


async def test_the_customer_with_the_approver_role_elsewhere_cannot_approve_their_refund(
    mesh_for_module: Mesh, waiting: str
) -> None:
    elsewhere = await _refused(mesh_for_module, _token("C-03", "approver", app=SHOP), waiting)
    assert elsewhere.code is ErrorCode.NOT_FOUND
    both = await _refused(mesh_for_module, _token("C-03", "customer", "approver"), waiting)
    assert both.code is ErrorCode.PERMISSION_DENIED
    # Their own refund is not in their queue either: they may not decide it.
    listed = _queue(mesh_for_module, _token("C-03", "customer", "approver"))
    assert waiting not in json.dumps(listed.json())
    still = await get_task(mesh_for_module, "C-03", waiting)
    assert still.status is Status.WAITING


def test_accord_tasks_as_another_apps_approver_lists_nothing_of_accord(
    mesh_for_module: Mesh, waiting: str
) -> None:
    shop = _token("approver-9", "approver", app=SHOP)
    listed = _accord(mesh_for_module, "tasks", "--token", shop, "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    items = json.loads(listed.stdout.strip().splitlines()[-1])
    assert items == []
    refused = _accord(mesh_for_module, "approve", waiting, "--token", shop, "--json")
    assert refused.returncode != 0
    assert ErrorCode.NOT_FOUND.value in refused.stdout + refused.stderr


async def test_the_apps_own_approver_sees_it_and_decides_it(
    mesh_for_module: Mesh, waiting: str
) -> None:
    # C-04's speaker (O-1006): five refunds in 90 days, so it waits for an approver too.
    other = await ask(mesh_for_module, "C-04", "refund order O-1006 please, I changed my mind")
    assert other.waiting_reason is WaitingReason.APPROVAL, other
    own = _token("approver-1", "approver")
    listed = _accord(mesh_for_module, "tasks", "--token", own, "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    items = {i["task_id"]: i for i in json.loads(listed.stdout.strip().splitlines()[-1])}
    assert items[waiting]["kind"] == "approval"
    assert items[waiting]["facts"]["order_id"] == "O-1004"
    assert items[other.task_id]["facts"]["customer_id"] == "C-04"

    decided = await _decide(mesh_for_module, own, other.task_id)
    assert decided.status is Status.COMPLETED, decided.error
    final = await get_task(mesh_for_module, "C-04", other.task_id)
    assert final.status is Status.COMPLETED
    assert (final.data or {})["decision"] == "refunded"
