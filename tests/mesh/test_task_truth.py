"""The workflow log is the only record of an orchestrator task (issue #11, "one truth").

Real processes: the five services (for the first test with commerce slowed down on
``orders.customer_history``, so that risk-check's child task is still running when the customer
cancels). Asserted here:

- a cancel while the checks run ends the task within a second, and the child tasks it started
  end canceled (read at policy-check and risk-check with the orchestrator's own identity);
- the same for a task waiting for the customer's answer (policy-check's child waits too);
- every read (GetTask, ListTasks) of a task is derived from the log: the progress lines it
  streamed are its history, a refused request is listed too, another customer sees nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Final

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import ENVELOPE_META_KEY
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from tests.mesh.support import Mesh, answer, ask, customer, get_task, running_mesh, token

pytestmark = pytest.mark.timeout(240)

SLOW_HISTORY_MS: Final = 20_000
CANCEL_WITHIN_S: Final = 1.0
SERVICE: Final = "svc:orchestrator"


@pytest.fixture(scope="module")
def slow_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    faults = {
        "ACCORD_FAULTS": f"orders.customer_history=latency:{SLOW_HISTORY_MS}",
        "ACCORD_DEV": "1",
    }
    with running_mesh(tmp_path_factory.mktemp("truth"), service_env={"commerce": faults}) as m:
        yield m
        # What commerce still holds are the injected 20 s delays: nothing to drain, and a
        # graceful stop would wait them out (10 s of teardown).
        m.services["commerce"].kill()


async def children(mesh: Mesh, agent: str, parent: str) -> list[TaskView]:
    """The child tasks ``parent`` started at ``agent`` (the orchestrator's own tasks there)."""
    async with await A2AClient.connect(mesh.url(agent), token=token(SERVICE, "service")) as c:
        views, _ = await c.list_tasks(page_size=100)
    return [
        v for v in views if (v.metadata.get(ENVELOPE_META_KEY) or {}).get("parent_task") == parent
    ]


async def until_child(mesh: Mesh, agent: str, parent: str, *statuses: Status) -> TaskView:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        found = [v for v in await children(mesh, agent, parent) if v.status in statuses]
        if found:
            return found[0]
        await asyncio.sleep(0.05)  # polling a remote agent, bounded by the deadline
    raise TimeoutError(f"no {agent} child of {parent} in {statuses}")


async def customer_send(
    mesh: Mesh, subject: str, text: str, on_update: Callable[[TaskView], None]
) -> TaskView:
    async with await customer(mesh, subject) as client:
        return await client.send(text=text, skill="refund.request", on_update=on_update)


async def timed_cancel(mesh: Mesh, subject: str, task_id: str) -> tuple[TaskView, float]:
    async with await customer(mesh, subject) as client:
        started = time.monotonic()
        canceled = await client.cancel(task_id)
        return canceled, time.monotonic() - started


async def test_cancel_while_the_checks_run_ends_fast_and_cancels_the_children(
    slow_mesh: Mesh,
) -> None:
    first = asyncio.Event()
    updates: list[TaskView] = []

    def seen(view: TaskView) -> None:
        updates.append(view)
        first.set()

    request = asyncio.create_task(
        customer_send(slow_mesh, "C-01", "鞋码不合适，想退款，订单 O-1001", seen)
    )
    await asyncio.wait_for(first.wait(), 60)  # the first streamed update names the task
    task_id = updates[0].task_id
    risk_child = await until_child(slow_mesh, "risk", task_id, Status.RUNNING)

    canceled, took_s = await timed_cancel(slow_mesh, "C-01", task_id)
    assert took_s < CANCEL_WITHIN_S, f"cancel took {took_s:.2f}s"
    assert canceled.status is Status.FAILED
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    final = await request  # the customer's own request ends too, with the same outcome
    assert final.status is Status.FAILED
    assert final.error is not None
    assert final.error.code is ErrorCode.CANCELED

    read = await get_task(slow_mesh, "C-01", task_id)
    assert read.a2a_state == "TASK_STATE_CANCELED"
    assert read.error is not None
    assert read.error.code is ErrorCode.CANCELED
    child = await until_child(slow_mesh, "risk", task_id, Status.FAILED)
    assert child.task_id == risk_child.task_id
    assert child.a2a_state == "TASK_STATE_CANCELED"
    for policy_child in await children(slow_mesh, "policy", task_id):
        # policy-check answers at once from the facts: it may have finished before the cancel.
        assert policy_child.a2a_state in ("TASK_STATE_CANCELED", "TASK_STATE_COMPLETED")


async def test_cancel_while_waiting_for_the_customer_cancels_the_waiting_child(
    mesh: Mesh,
) -> None:
    slow_mesh = mesh  # the shared mesh: risk-check must answer before the workflow waits
    view = await ask(slow_mesh, "C-01", "my mug arrived broken, order O-1005")
    assert view.status is Status.WAITING
    assert view.waiting_reason is WaitingReason.INPUT
    child = await until_child(slow_mesh, "policy", view.task_id, Status.WAITING)

    canceled, took_s = await timed_cancel(slow_mesh, "C-01", view.task_id)
    assert took_s < CANCEL_WITHIN_S, f"cancel took {took_s:.2f}s"
    assert canceled.a2a_state == "TASK_STATE_CANCELED"
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    ended = await until_child(slow_mesh, "policy", view.task_id, Status.FAILED)
    assert ended.task_id == child.task_id
    assert ended.a2a_state == "TASK_STATE_CANCELED"
    # A canceled task takes no more messages.
    with pytest.raises(AccordError) as refused:
        await answer(slow_mesh, "C-01", view.task_id, "photo attached")
    assert refused.value.code is ErrorCode.UNSUPPORTED_OPERATION


async def test_reads_are_derived_from_the_log_and_scoped_to_their_owner(mesh: Mesh) -> None:
    slow_mesh = mesh
    asked = await ask(slow_mesh, "C-01", "my mug arrived broken, order O-1005")
    assert asked.status is Status.WAITING
    # An order id that breaks the skill's input schema: refused at the first turn.
    refused = await ask(slow_mesh, "C-01", "refund please", data={"order_id": "O-1"})
    assert refused.status is Status.FAILED
    assert refused.error is not None
    assert refused.error.code is ErrorCode.INVALID_INPUT

    async with await customer(slow_mesh, "C-01") as client:
        listed, _ = await client.list_tasks()
        got = await client.get(asked.task_id)
    by_id = {v.task_id: v for v in listed}
    assert by_id[asked.task_id].waiting_reason is WaitingReason.INPUT
    assert by_id[refused.task_id].error is not None
    assert by_id[refused.task_id].error.code is ErrorCode.INVALID_INPUT
    assert got.question == asked.question
    assert got.metadata["dev.accord/skill"] == "refund.request"

    async with await customer(slow_mesh, "C-09") as other:
        theirs, _ = await other.list_tasks()
        assert asked.task_id not in {v.task_id for v in theirs}
        with pytest.raises(AccordError) as caught:
            await other.get(asked.task_id)
    assert caught.value.code is ErrorCode.NOT_FOUND
