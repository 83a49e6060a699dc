"""A replica acts on a task as the shared log has it, not as its memory last saw it (#35).

Two orchestrator processes, A and B, on one PostgreSQL database (tests/mesh/replica_support.py):

- a task A created and parked (waiting for an approver) is canceled through B; a follow-up
  message to A, blocking and streaming, is refused as a message to a terminal task
  (UNSUPPORTED_OPERATION), exactly as one process refuses it when the cancel came through it;
  never a 5xx;
- the other way round works: a task A created is continued (answered) through B;
- a task A is running right now (paused in its refund node) is canceled through B: a message to
  A is refused the same way, A's in-flight turn ends canceled (it does not write completed over
  the cancel) and no money moves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Final

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.runtime.workflow import EventType
from tests.mesh.replica_support import Replicas, running_replicas
from tests.mesh.support import PAUSE_MARKER, Mesh, answer, ask, get_task, token, until
from tests.mesh.test_crash import Started
from tests.security.test_replica_terminal import _rpc, _rpc_error
from tests.support import postgres

pytestmark = pytest.mark.timeout(300)

RUNNING_ORDER: Final = "O-1003"
# A pauses there, and then goes on by itself: what it does after the cancel is the question.
PAUSE_S: Final = 6


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str
) -> Iterator[Replicas]:
    with running_replicas(
        tmp_path_factory.mktemp("replica-stale"),
        postgres.fresh_database(postgres_server_url),
        # Pause points are refused outside development mode.
        {"ACCORD_TEST_PAUSE": f"refund.before_issue@{RUNNING_ORDER}:{PAUSE_S}", "ACCORD_DEV": "1"},
        {},
    ) as started:
        yield started


async def _cancel(via: Mesh, subject: str, task_id: str) -> None:
    async with await A2AClient.connect(via.orchestrator, token=token(subject)) as client:
        canceled = await client.cancel(task_id)
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED


async def _refused_on(via: Mesh, subject: str, task_id: str, tag: str) -> list[ErrorCode]:
    """The error codes of a follow-up message to ``task_id`` on ``via``, blocking, streaming."""
    codes = []
    for n, method in enumerate(("SendMessage", "SendStreamingMessage")):
        reply = await _rpc(via.orchestrator, method, task_id, f"m-{tag}-{n}", subject)
        assert reply.status_code == 200, (method, reply.status_code, reply.text[:300])
        codes.append(_rpc_error(reply).code)
    return codes


async def test_a_message_to_a_parked_task_b_canceled_is_refused_on_a_as_on_one_process(
    replicas: Replicas,
) -> None:
    a, b = replicas.via("a"), replicas.via("b")
    text = "I changed my mind about the laptop, refund order O-1004"
    elsewhere, here = await ask(a, "C-03", text), await ask(a, "C-03", text)
    for view in (elsewhere, here):
        assert view.waiting_reason is WaitingReason.APPROVAL, view.error
    await _cancel(b, "C-03", elsewhere.task_id)
    await _cancel(a, "C-03", here.task_id)  # one process: canceled where it is continued

    refused = await _refused_on(a, "C-03", elsewhere.task_id, "elsewhere")
    assert refused == await _refused_on(a, "C-03", here.task_id, "here")
    assert refused == [ErrorCode.UNSUPPORTED_OPERATION] * 2
    for replica in (a, b):
        read = await get_task(replica, "C-03", elsewhere.task_id)
        assert read.status is Status.FAILED
        assert read.error is not None
        assert read.error.code is ErrorCode.CANCELED
    log = replicas.a.log()
    assert "Traceback" not in log, log[-3000:]


async def test_a_task_a_created_is_continued_through_b(replicas: Replicas) -> None:
    a, b = replicas.via("a"), replicas.via("b")
    view = await ask(a, "C-01", "my mug arrived broken, order O-1005")
    assert view.waiting_reason is WaitingReason.INPUT, view.error
    done = await answer(b, "C-01", view.task_id, "the handle snapped off, photo IMG_1.jpg")
    assert done.error is None, done.error
    assert done.status in (Status.COMPLETED, Status.WAITING), done
    for replica in (a, b):
        assert (await get_task(replica, "C-01", view.task_id)).status is done.status


async def test_a_task_a_runs_canceled_through_b_ends_canceled_everywhere(
    replicas: Replicas,
) -> None:
    a, b = replicas.via("a"), replicas.via("b")
    run = Started(a, "C-02", f"my jacket from order {RUNNING_ORDER} arrived torn, photo IMG_7.jpg")
    marker = f"{PAUSE_MARKER} refund.before_issue@{RUNNING_ORDER}"
    await asyncio.to_thread(replicas.wait_for_log, "a", marker)
    task_id = await run.task_id()
    await _cancel(b, "C-02", task_id)

    refused = await _refused_on(a, "C-02", task_id, "running")
    assert refused == [ErrorCode.UNSUPPORTED_OPERATION] * 2
    # A's own call (the customer's first message) ends once A's paused node goes on: canceled.
    try:
        ended: TaskView | AccordError = await asyncio.wait_for(run.call, PAUSE_S + 60)
    except AccordError as error:
        ended = error
    code = ended.code if isinstance(ended, AccordError) else ended.error and ended.error.code
    assert code is ErrorCode.CANCELED, ended
    for replica in (a, b):
        read = await until(replica, "C-02", task_id, Status.FAILED, Status.COMPLETED)
        assert read.status is Status.FAILED
        assert read.error is not None
        assert read.error.code is ErrorCode.CANCELED
    counts = await replicas.event_counts(task_id)
    assert counts.get((EventType.CANCELED, "")) == 1, counts
    assert (EventType.WORKFLOW_FINISHED, "") not in counts, counts
    assert await replicas.refund_rows(RUNNING_ORDER) == 0
    log = replicas.a.log()
    assert "illegal status transition" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
