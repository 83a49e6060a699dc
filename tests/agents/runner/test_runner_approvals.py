"""An approval through the Runner: the same approval workflow as the orchestrator's
``refund.approve`` (both assembled by refund/assembly.py), with the same rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.agents.runner.helpers import collect, final

from accord.agents.runner import Runner
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status

pytestmark = pytest.mark.timeout(120)
LAPTOP = "I changed my mind, please refund the laptop, order O-1004"


async def test_an_approver_approves_a_waiting_refund_through_the_runner(runner: Runner) -> None:
    asked = final(await collect(runner, LAPTOP, user="C-03", session="laptop"))
    assert asked.status is Status.WAITING
    assert (asked.data or {})["waiting_reason"] == "approval"
    task_id = asked.workflow_id
    assert task_id is not None

    queue = await runner.approvals(approver="approver-1")
    assert [(i["kind"], i["task_id"]) for i in queue] == [("approval", task_id)]
    assert await runner.approvals(approver="C-03") == []  # their own is not theirs to decide

    with pytest.raises(AccordError) as own:
        await runner.approve(task_id, approver="C-03", decision="approve")
    assert own.value.code is ErrorCode.PERMISSION_DENIED

    decided = await runner.approve(task_id, approver="approver-1", decision="approve", note="ok")
    assert decided["task_id"] == task_id
    assert decided["decision"] == "approve"
    outcome = decided["outcome"]
    assert outcome["status"] == "completed"
    assert outcome["result"]["decision"] == "refunded"
    assert outcome["result"]["approved_by"] == "approver-1"
    assert outcome["result"]["receipt"]["receipt_id"].startswith("R-")

    # Decided once: the refund no longer waits, and the queue is empty.
    with pytest.raises(AccordError) as twice:
        await runner.approve(task_id, approver="approver-1", decision="approve")
    assert twice.value.code is ErrorCode.INVALID_INPUT
    assert await runner.approvals(approver="approver-1") == []
    session = await runner.get_session(user="C-03", session="laptop")
    assert session is not None
    assert session.state["status"] == "completed"
    assert session.state["decision"] == "refunded"


async def test_an_approver_of_another_app_finds_no_such_refund(
    runner: Runner, data_dir: Path
) -> None:
    asked = final(await collect(runner, LAPTOP, user="C-03", session="other-app"))
    assert asked.workflow_id is not None
    # Another app's Runner on the same log (no peers needed: an approval calls none).
    path = data_dir / "runner-accord-workflows.db"
    assert path.exists()
    same_log = f"sqlite:///{path}"
    async with Runner("other", in_process=False, event_log_url=same_log) as elsewhere:
        assert await elsewhere.approvals(approver="approver-1") == []
        with pytest.raises(AccordError) as found:
            await elsewhere.approve(asked.workflow_id, approver="approver-1", decision="approve")
    assert found.value.code is ErrorCode.NOT_FOUND
    assert [i["task_id"] for i in await runner.approvals(approver="approver-1")] == [
        asked.workflow_id
    ]
