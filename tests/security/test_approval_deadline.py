"""Which deadline governs a refund that waits for an approver, and no approval pays after its
task has ended (ENV-009).

Found against a running mesh (issue #30, finding 7): an approval 13 s after the customer's
envelope deadline paid, and a task waiting past its deadline stayed waiting until someone
answered. The rule now (the orchestrator contract, refund.approve): the approval timeout
(ACCORD_APPROVAL_TIMEOUT_S) bounds the approval and ends the task (failed, RETRYABLE_TIMEOUT);
the customer's envelope deadline bounds only the customer's own wait; an approval of a task
that ended (timed out, canceled) is refused and pays nothing, even when it comes before the
timeout's timer fired (the workflow runtime's test of that race:
tests/runtime/workflow/test_waiting.py). Real processes: a mesh of this module's own, with a
short approval timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from tests.mesh.money_support import ledger_sums
from tests.mesh.support import Mesh, approve, ask, customer, get_task, running_mesh, token, until

pytestmark = pytest.mark.timeout(300)

APPROVAL_TIMEOUT_S = 15.0
ENVELOPE_S = 6.0


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    env = {"ACCORD_APPROVAL_TIMEOUT_S": str(APPROVAL_TIMEOUT_S)}
    with running_mesh(tmp_path_factory.mktemp("approval-deadline"), orchestrator_env=env) as m:
        yield m


async def _waiting(mesh: Mesh, subject: str, order: str) -> TaskView:
    view = await ask(mesh, subject, f"I changed my mind, refund order {order}")
    assert (view.status, view.waiting_reason) == (Status.WAITING, WaitingReason.APPROVAL), view
    return view


async def _refused(mesh: Mesh, task_id: str) -> None:
    """Refused before a task is made: an error answer, nothing in the approver's list."""
    with pytest.raises(AccordError) as refused:
        await approve(mesh, "approver-1", ("approver",), task_id)
    assert refused.value.code is ErrorCode.INVALID_INPUT, refused.value


async def test_an_approval_after_the_approval_timeout_pays_nothing(mesh: Mesh) -> None:
    before = ledger_sums(mesh).get("O-1004")
    view = await _waiting(mesh, "C-03", "O-1004")
    ended = await until(mesh, "C-03", view.task_id, Status.FAILED, deadline_s=90)
    assert ended.error is not None
    assert ended.error.code is ErrorCode.RETRYABLE_TIMEOUT, ended.error
    await _refused(mesh, view.task_id)
    assert (await get_task(mesh, "C-03", view.task_id)).status is Status.FAILED
    assert ledger_sums(mesh).get("O-1004") == before


async def test_an_approval_of_a_canceled_refund_pays_nothing(mesh: Mesh) -> None:
    before = ledger_sums(mesh).get("O-1004")
    view = await _waiting(mesh, "C-03", "O-1004")
    async with await customer(mesh, "C-03") as client:
        await client.cancel(view.task_id)
    await _refused(mesh, view.task_id)
    assert ledger_sums(mesh).get("O-1004") == before


async def test_the_customers_deadline_bounds_their_wait_not_the_approval(mesh: Mesh) -> None:
    """The envelope's deadline passes while the refund waits: the task keeps waiting (the
    approval timeout governs it), and an approval within that timeout pays."""
    deadline = datetime.now(UTC) + timedelta(seconds=ENVELOPE_S)
    envelope = DelegationEnvelope(
        goal="refund",
        budget=Budget(units=50, tool_calls=20, deadline=deadline),
        tenant=Tenant(app="accord", user="C-04", session="approval-deadline"),
    )
    async with await A2AClient.connect(mesh.orchestrator, token=token("C-04")) as client:
        view = await client.send(
            text="I changed my mind, refund order O-1006", skill="refund.request", envelope=envelope
        )
    assert view.waiting_reason is WaitingReason.APPROVAL, view
    # Read the task until the customer's deadline has passed: it waits on all along.
    while datetime.now(UTC) <= deadline:
        assert (await get_task(mesh, "C-04", view.task_id)).status is Status.WAITING
        await asyncio.sleep(0.5)  # the deadline is wall-clock time; the loop is bounded by it
    started = time.monotonic()
    decided = await approve(mesh, "approver-1", ("approver",), view.task_id)
    assert time.monotonic() - started < APPROVAL_TIMEOUT_S
    assert decided.status is Status.COMPLETED, decided
    done = await get_task(mesh, "C-04", view.task_id)
    assert (done.data or {}).get("decision") == "refunded", done
