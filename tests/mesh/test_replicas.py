"""Two orchestrator replicas (real processes) on one PostgreSQL database (docs/replicas.md).

- an approval sent to B finishes the workflow that A parked;
- a task is read and canceled through either replica, whichever created it;
- A is killed with SIGKILL in the middle of two workflows: once A's lease expires, B resumes
  each exactly once, the customers' tasks read completed through B, and the payments ledger
  holds one refund per order (killed just after the ledger write, and just before it); a
  message sent to B while A still ran the workflow gets the outcome;
- A restarting while B executes an approval leaves B's task alone.

A and B pause at fixed points for their own orders only (``ACCORD_TEST_PAUSE``), so a kill or a
restart lands exactly where it is meant to. The tests share one mesh and run in file order; a
test that needs A alive starts it again if an earlier one killed it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Final

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.runtime.workflow import EventType
from tests.deploy.files import k8s_manifests, load_all, of_kind
from tests.mesh.replica_support import Replicas, running_replicas
from tests.mesh.support import PAUSE_MARKER, answer, approve, ask, get_task, token, until
from tests.mesh.test_crash import Started
from tests.support import postgres

pytestmark = pytest.mark.timeout(300)

# Where replica A stops (for 120 s, i.e. until it is killed), by order.
PAUSES: Final = {
    "O-1001": "refund.after_issue",  # the ledger holds the refund, the log does not know yet
    "O-1003": "refund.before_issue",  # the refund node started, nothing written yet
}
B_PAUSED: Final = "O-1006"  # replica B stops just before paying it (after it was approved)


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str
) -> Iterator[Replicas]:
    pauses = ",".join(f"{point}@{order}:120" for order, point in PAUSES.items())
    with running_replicas(
        tmp_path_factory.mktemp("replicas"),
        postgres.fresh_database(postgres_server_url),
        # Pause points are refused outside development mode.
        {"ACCORD_TEST_PAUSE": pauses, "ACCORD_DEV": "1"},
        {"ACCORD_TEST_PAUSE": f"refund.before_issue@{B_PAUSED}:120", "ACCORD_DEV": "1"},
    ) as started:
        yield started


async def test_an_approval_sent_to_b_finishes_what_a_parked(replicas: Replicas) -> None:
    replicas.ensure_a()
    a, b = replicas.via("a"), replicas.via("b")
    view = await ask(a, "C-03", "I changed my mind about the laptop, refund order O-1004")
    assert view.waiting_reason is WaitingReason.APPROVAL, view.error
    # B sees the same waiting task, and lists the approval in its queue.
    seen = await get_task(b, "C-03", view.task_id)
    assert seen.status is Status.WAITING
    assert seen.waiting_reason is WaitingReason.APPROVAL
    async with httpx.AsyncClient(base_url=b.orchestrator) as http:
        queue = await http.get(
            "/approvals",
            headers={
                "A2A-Version": "1.0",
                "Authorization": f"Bearer {token('approver-1', 'approver')}",
            },
        )
    assert view.task_id in {item["task_id"] for item in queue.json()["approvals"]}

    decided = await approve(b, "approver-1", ("approver",), view.task_id, note="checked on B")
    assert decided.status is Status.COMPLETED, decided.error
    assert (decided.data or {})["outcome"]["result"]["decision"] == "refunded"
    for replica in (a, b):
        final = await until(replica, "C-03", view.task_id, Status.COMPLETED, Status.FAILED)
        assert final.status is Status.COMPLETED, final.error
        assert (final.data or {})["approved_by"] == "approver-1"
    assert await replicas.refund_rows("O-1004") == 1
    # A second approval, through A this time, finds nothing left to decide.
    with pytest.raises(AccordError) as twice:
        await approve(a, "approver-2", ("approver",), view.task_id)
    assert twice.value.code is ErrorCode.INVALID_INPUT


async def test_a_task_a_created_is_canceled_through_b(replicas: Replicas) -> None:
    replicas.ensure_a()
    a, b = replicas.via("a"), replicas.via("b")
    before = set(await replicas.policy_tasks())
    view = await ask(a, "C-01", "my mug arrived broken, order O-1005")
    assert view.waiting_reason is WaitingReason.INPUT, view.error
    children = [t for t in await replicas.policy_tasks() if t not in before]
    assert len(children) == 1  # policy-check's question, relayed to the customer
    seen = await get_task(b, "C-01", view.task_id)
    assert seen.waiting_reason is WaitingReason.INPUT
    assert seen.question == view.question

    async with await A2AClient.connect(b.orchestrator, token=token("C-01")) as client:
        canceled = await client.cancel(view.task_id)
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    # B canceled the workflow through the shared log, and with it policy-check's child task.
    assert (await replicas.policy_tasks())[children[0]] == "TASK_STATE_CANCELED"
    assert (await replicas.event_counts(view.task_id)).get((EventType.CANCELED, "")) == 1
    read = await get_task(a, "C-01", view.task_id)
    assert read.status is Status.FAILED
    assert read.error is not None
    assert read.error.code is ErrorCode.CANCELED
    with pytest.raises(AccordError):  # a canceled task takes no more messages, on either
        await answer(a, "C-01", view.task_id, "the handle snapped off, photo IMG_1.jpg")
    assert await replicas.refund_rows("O-1005") == 0


async def test_a_task_b_created_is_canceled_through_a(replicas: Replicas) -> None:
    replicas.ensure_a()
    a, b = replicas.via("a"), replicas.via("b")
    view = await ask(b, "C-04", "please refund order O-1006, I changed my mind")
    assert view.waiting_reason is WaitingReason.APPROVAL, view.error
    async with await A2AClient.connect(a.orchestrator, token=token("C-04")) as client:
        canceled = await client.cancel(view.task_id)
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    read = await get_task(b, "C-04", view.task_id)
    assert read.status is Status.FAILED
    assert read.error is not None
    assert read.error.code is ErrorCode.CANCELED
    # An approval for the canceled workflow is refused (its code is the approvals module's
    # business, not the replicas'), the task stays canceled and nothing is paid.
    with pytest.raises(AccordError):
        await approve(b, "approver-1", ("approver",), view.task_id)
    assert (await get_task(a, "C-04", view.task_id)).status is Status.FAILED
    assert await replicas.refund_rows("O-1006") == 0


async def test_b_resumes_exactly_once_what_a_ran_when_killed(replicas: Replicas) -> None:
    replicas.ensure_a()
    a, b = replicas.via("a"), replicas.via("b")
    runs = {
        "O-1001": Started(a, "C-01", "鞋码不合适，想退款，订单 O-1001"),
        "O-1003": Started(a, "C-02", "my jacket from order O-1003 arrived torn, photo IMG_7.jpg"),
    }
    await asyncio.gather(
        *(
            asyncio.to_thread(replicas.wait_for_log, "a", f"{PAUSE_MARKER} {point}@{order}")
            for order, point in PAUSES.items()
        )
    )
    ids = {order: await run.task_id() for order, run in runs.items()}
    assert await replicas.refund_rows("O-1001") == 1  # A wrote it, then stopped
    assert await replicas.refund_rows("O-1003") == 0  # A stopped just before writing
    # The customer asks B about a workflow that runs on A: B follows it in the shared log and
    # answers when it settles, wherever it ran (not a failed task while A still works on it).
    asking_b = asyncio.create_task(answer(b, "C-02", ids["O-1003"], "any news?"))
    assert (await get_task(b, "C-02", ids["O-1003"])).status is Status.RUNNING

    replicas.kill_a()
    # The customers' calls broke with A; their tasks carry on, on B, once A's lease expires.
    # Those calls follow their tasks on A, which is gone, until their own deadline (a minute):
    # what they end with is not this test's question, so they are canceled once B has answered.
    followed = await asyncio.wait_for(asking_b, 120)
    assert followed.status is Status.COMPLETED, followed.error
    assert (followed.data or {})["decision"] == "refunded"
    for order, run in runs.items():
        done = await until(b, run.subject, ids[order], Status.COMPLETED, Status.FAILED)
        assert done.status is Status.COMPLETED, (order, done.error)
        assert (done.data or {})["decision"] == "refunded", order
        key = f"refund:{order}:{ids[order]}"  # the order and this request (its task)
        assert (done.data or {})["receipt"]["idempotency_key"] == key

        assert await replicas.refund_rows(order) == 1, order
        found = await replicas.refund_receipt(key, run.subject)
        assert found["found"] is True
        assert found["receipt"]["order_id"] == order
        counts = await replicas.event_counts(ids[order])
        # The refund node ran on A and again on B; it finished, and the workflow ended, once.
        assert counts[(EventType.NODE_STARTED, "refund")] == 2, (order, counts)
        assert counts[(EventType.NODE_OUTPUT, "refund")] == 1, (order, counts)
        assert counts[(EventType.WORKFLOW_FINISHED, "")] == 1, (order, counts)
    for run in runs.values():
        run.call.cancel()
    await asyncio.gather(*(run.call for run in runs.values()), return_exceptions=True)


async def test_a_restarting_replica_leaves_the_others_running_work_alone(
    replicas: Replicas,
) -> None:
    """A replica that starts must not fail what another live replica is working on (here: an
    approver's refund.approve task, an "approval" workflow that B executes)."""
    replicas.ensure_a()
    a, b = replicas.via("a"), replicas.via("b")
    view = await ask(b, "C-04", f"please refund order {B_PAUSED}, I changed my mind")
    assert view.waiting_reason is WaitingReason.APPROVAL, view.error
    updates: list[TaskView] = []
    approver = token("approver-1", "approver")
    async with await A2AClient.connect(b.orchestrator, token=approver) as client:
        approving = asyncio.create_task(
            client.send(
                data={"task_id": view.task_id, "decision": "approve"},
                skill="refund.approve",
                on_update=updates.append,
            )
        )
        try:
            marker = f"{PAUSE_MARKER} refund.before_issue@{B_PAUSED}"
            await asyncio.to_thread(replicas.wait_for_log, "b", marker)
            approval_id = await _first_task_id(updates, approving)

            replicas.restart_a()  # it starts (and recovers what it may) while B works

            async with await A2AClient.connect(a.orchestrator, token=approver) as via_a:
                running = await via_a.get(approval_id)
            assert running.status is Status.RUNNING, running.error
            customer_task = await get_task(a, "C-04", view.task_id)
            assert customer_task.status is not Status.FAILED, customer_task.error
            assert not approving.done()
        finally:
            approving.cancel()
            await asyncio.gather(approving, return_exceptions=True)


async def _first_task_id(updates: list[TaskView], call: asyncio.Task[TaskView]) -> str:
    """The id of the task a streaming call created, as soon as its first update arrived."""
    end = time.monotonic() + 30
    while not updates:
        assert not call.done(), call.result().error
        assert time.monotonic() < end, "the call streamed nothing in 30 s"
        await asyncio.sleep(0.02)
    return updates[0].task_id


def test_the_shipped_manifests_run_replicas_as_this_module_does() -> None:
    """Several replicas per Deployment, each with a data directory of its own (an emptyDir:
    the owner file), and no switch to turn recovery off (it is replica-safe)."""
    docs = load_all(k8s_manifests())
    config = of_kind(docs, "ConfigMap")["accord-config"]["data"]
    assert "ACCORD_TASK_RECOVERY" not in config
    orchestrator = of_kind(docs, "Deployment")["orchestrator"]
    assert orchestrator["spec"]["replicas"] >= 2
    volumes = orchestrator["spec"]["template"]["spec"]["volumes"]
    assert "emptyDir" in next(v for v in volumes if v["name"] == "data")
