"""Crash safety with real processes: kill -9 the orchestrator at several points, restart it on
the same data directory; every workflow finishes and the ledger holds one refund per order.
Also: an approval timeout that passes while the orchestrator is down, and cancel."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from tests.mesh.money_support import assert_views_agree
from tests.mesh.support import (
    PAUSE_MARKER,
    Mesh,
    answer,
    approve,
    ask,
    customer,
    running_mesh,
    token,
    until,
)

pytestmark = pytest.mark.timeout(300)

PAUSES = {
    "O-1001": "order.after_lookup",  # after the lookup
    "O-1005": "policy.child_running",  # while policy-check runs
    "O-1006": "refund.before_issue",  # just before refunds.issue writes
    "O-1003": "refund.after_issue",  # just after refunds.issue wrote
}
CANCEL_PAUSE = "policy.child_running@O-1002:120"
TIMEOUT_ENV = {
    "ACCORD_APPROVAL_TIMEOUT_S": "2",
    "ACCORD_TEST_PAUSE": CANCEL_PAUSE,
    "ACCORD_DEV": "1",  # pause points are refused outside development mode
}


PAUSE_ENV = {
    # The kill -9 test's points, and the cancel test's (O-1002 while policy-check runs), so
    # each test finds its pause whichever order they run in.
    "ACCORD_TEST_PAUSE": ",".join(
        [*(f"{point}@{order}:120" for order, point in PAUSES.items()), CANCEL_PAUSE]
    ),
    "ACCORD_DEV": "1",  # pause points are refused outside development mode
}


@pytest.fixture(scope="module")
def crash_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("crash"), orchestrator_env=PAUSE_ENV) as mesh:
        yield mesh


class Started:
    """A customer's first message sent in the background; its task id as soon as it streams."""

    def __init__(self, mesh: Mesh, subject: str, text: str) -> None:
        self.subject = subject
        self.updates: list[TaskView] = []
        self.call = asyncio.create_task(ask(mesh, subject, text, self.updates))

    async def task_id(self) -> str:
        while not self.updates:
            if self.call.done():
                return (await self.call).task_id
            await asyncio.sleep(0.02)
        return self.updates[0].task_id


async def _marker(mesh: Mesh, point: str, order: str) -> None:
    await asyncio.to_thread(mesh.wait_for_log, f"{PAUSE_MARKER} {point}@{order}", 90.0)


async def test_kill_9_at_several_points_then_every_workflow_finishes_once(
    crash_mesh: Mesh,
) -> None:
    mesh = crash_mesh
    # Whatever ran before in this module (the approval-timeout test restarts the orchestrator
    # with other settings), this test needs its own pause points.
    mesh.restart_orchestrator(PAUSE_ENV, kill=False)
    w1001 = Started(mesh, "C-01", "鞋码不合适，想退款，订单 O-1001")
    # $20 of the 35.00 mug: the cancel test, in either order, still finds O-1005 refundable.
    w1005 = Started(mesh, "C-01", "my mug arrived broken, refund $20 of order O-1005")
    w1003 = Started(mesh, "C-02", "my jacket from order O-1003 arrived torn, photo IMG_7.jpg")
    # Part of the laptop only (high risk by amount all the same): the approval-timeout test,
    # which may run after this one, needs O-1004 refundable still (a paid order is answered
    # already_refunded, never sent to an approver again).
    w1004 = await ask(mesh, "C-03", "I changed my mind, please refund $600 of order O-1004")
    w1006 = await ask(mesh, "C-04", "please refund order O-1006, I changed my mind")
    assert w1004.waiting_reason is WaitingReason.APPROVAL
    assert w1006.waiting_reason is WaitingReason.APPROVAL
    # The approval of O-1006 resumes its workflow, which stops just before refunds.issue.
    approving = asyncio.create_task(
        approve(mesh, "approver-1", ("approver",), w1006.task_id, note="ok")
    )
    await asyncio.gather(*(_marker(mesh, point, order) for order, point in PAUSES.items()))
    ids = {
        "O-1001": await w1001.task_id(),
        "O-1005": await w1005.task_id(),
        "O-1003": await w1003.task_id(),
    }

    mesh.restart_orchestrator({"ACCORD_TEST_PAUSE": ""})  # SIGKILL, then start again
    # The calls in flight broke with the process; the tasks themselves carry on.
    await asyncio.gather(w1001.call, w1005.call, w1003.call, approving, return_exceptions=True)

    for order, subject in (("O-1001", "C-01"), ("O-1003", "C-02")):
        done = await until(mesh, subject, ids[order], Status.COMPLETED, Status.FAILED)
        assert (done.data or {}).get("decision") == "refunded", (order, done.error)
        if order == "O-1003":
            # Killed just after refunds.issue wrote: the resumed attempt asked refunds.get
            # before writing (a first attempt does not ask) and found the receipt.
            assert any("paid once only" in r for r in (done.data or {})["reasons"]), done.data
    done = await until(mesh, "C-04", w1006.task_id, Status.COMPLETED, Status.FAILED)
    assert (done.data or {})["approved_by"] == "approver-1", done.error
    # policy-check ran again after the restart and asks its question in the same task.
    asked = await until(mesh, "C-01", ids["O-1005"], Status.WAITING, Status.FAILED)
    assert asked.waiting_reason is WaitingReason.INPUT
    assert "photo" in (asked.question or "")
    done = await answer(mesh, "C-01", ids["O-1005"], "the handle is off, photo IMG_9.jpg")
    assert (done.data or {}).get("decision") == "refunded", done.error
    # The approval survived the crash: the restarted orchestrator still waits for it.
    waiting = await until(mesh, "C-03", w1004.task_id, Status.WAITING)
    assert waiting.waiting_reason is WaitingReason.APPROVAL
    decided = await approve(mesh, "approver-1", ("approver",), w1004.task_id)
    assert decided.status is Status.COMPLETED, decided.error

    assert mesh.refund_rows() == {o: 1 for o in ("O-1001", "O-1003", "O-1004", "O-1005", "O-1006")}
    # One record of money: commerce's view of every order is the ledger's, after the kill -9s.
    await assert_views_agree(mesh)


async def test_approval_timeout_passes_while_the_orchestrator_is_down(crash_mesh: Mesh) -> None:
    mesh = crash_mesh
    mesh.restart_orchestrator(TIMEOUT_ENV, kill=False)
    view = await ask(mesh, "C-03", "refund $600 of order O-1004 please, I changed my mind")
    assert view.waiting_reason is WaitingReason.APPROVAL
    mesh.services["orchestrator"].kill()
    # Real processes keep real time: wait out the approval deadline the log recorded (2 s
    # from the interrupt), so that it passes while nobody runs.
    due_at = _approval_due(mesh, view.task_id)
    assert due_at - time.time() <= 2.0  # ACCORD_APPROVAL_TIMEOUT_S
    await asyncio.sleep(max(0.0, due_at - time.time()))
    mesh.restart_orchestrator(TIMEOUT_ENV)
    failed = await until(mesh, "C-03", view.task_id, Status.FAILED)
    assert failed.error is not None
    assert failed.error.code is ErrorCode.RETRYABLE_TIMEOUT


async def _policy_tasks(mesh: Mesh) -> list[dict[str, Any]]:
    headers = {
        "A2A-Version": "1.0",
        "Authorization": f"Bearer {token('svc:orchestrator', 'service')}",
    }
    async with httpx.AsyncClient() as http:
        body = (await http.get(mesh.url("policy") + "/tasks", headers=headers)).json()
    return list(body.get("tasks", []))


def _approval_due(mesh: Mesh, workflow_id: str) -> float:
    """When the pending approval's timer is due, from its `interrupted` event in the log."""
    return float(mesh.workflow_events(workflow_id, "interrupted")[-1][1]["due_at"])


def _last_event(mesh: Mesh, workflow_id: str) -> str:
    return mesh.workflow_events(workflow_id)[-1][0]


async def test_cancel_while_policy_check_waits_cancels_the_child(crash_mesh: Mesh) -> None:
    mesh = crash_mesh
    mesh.restart_orchestrator({"ACCORD_TEST_PAUSE": ""}, kill=False)  # no pause, whatever ran
    before = {t["id"] for t in await _policy_tasks(mesh)}
    refunds = mesh.refund_rows().get("O-1005", 0)  # the kill -9 test may have refunded it
    view = await ask(mesh, "C-01", "my mug arrived broken, order O-1005")
    assert view.waiting_reason is WaitingReason.INPUT
    children = [
        t
        for t in await _policy_tasks(mesh)
        if t["id"] not in before and t["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    ]
    assert len(children) == 1  # the one child task waiting for the customer's evidence
    async with await customer(mesh, "C-01") as client:
        canceled = await client.cancel(view.task_id)
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    child = next(t for t in await _policy_tasks(mesh) if t["id"] == children[0]["id"])
    assert child["status"]["state"] == "TASK_STATE_CANCELED"
    assert _last_event(mesh, view.task_id) == "canceled"
    with pytest.raises(AccordError):  # a canceled task takes no more messages
        await answer(mesh, "C-01", view.task_id, "photo IMG_1.jpg")
    assert mesh.refund_rows().get("O-1005", 0) == refunds  # the canceled task paid nothing


async def test_cancel_mid_workflow_while_a_node_runs(crash_mesh: Mesh) -> None:
    mesh = crash_mesh
    mesh.restart_orchestrator(PAUSE_ENV, kill=False)  # its pause, whatever ran before
    started = Started(mesh, "C-01", "The shoes from order O-1002 do not fit, refund please")
    await _marker(mesh, "policy.child_running", "O-1002")
    task_id = await started.task_id()
    async with await customer(mesh, "C-01") as client:
        canceled = await client.cancel(task_id)
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    await asyncio.gather(started.call, return_exceptions=True)
    assert _last_event(mesh, task_id) == "canceled"
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # nothing is written after it, not even later
        assert _last_event(mesh, task_id) == "canceled"
        await asyncio.sleep(0.2)
    async with await A2AClient.connect(mesh.orchestrator, token=token("C-01")) as client:
        assert (await client.get(task_id)).status is Status.FAILED
    assert "O-1002" not in mesh.refund_rows()
