"""ContractTaskUpdater: the SDK's TaskUpdater, refusing illegal contract transitions (STATUS-003)
and writing the contract metadata on every status, whichever of its methods emits it."""

from __future__ import annotations

import pytest
from a2a.types import Message, Part, Role, TaskState
from google.protobuf.json_format import MessageToDict

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import ERROR_DATA_KIND, STATUS_META_KEY
from accord.contracts.status import ContractState, Status, WaitingReason
from accord.protocol.a2a.server.status_emitter import ContractTaskUpdater, Progress
from tests.protocol.a2a.recording_queue import RecordingQueue

RUNNING = ContractState(status=Status.RUNNING)
COMPLETED = ContractState(status=Status.COMPLETED)
WAITING = ContractState(status=Status.WAITING, waiting_reason=WaitingReason.APPROVAL)


def updater(current: Status) -> tuple[ContractTaskUpdater, RecordingQueue]:
    queue = RecordingQueue()
    return ContractTaskUpdater(queue, "t-1", "c-1", current, agent="test-agent"), queue


async def test_a_legal_lifecycle_is_emitted_with_contract_metadata() -> None:
    up, queue = updater(Status.QUEUED)
    await up.status(RUNNING, task_meta={"dev.accord/spent": 1})
    await Progress(up).update("step one", node="one")  # running -> running: a progress note
    await up.status(WAITING, text="who approves?")
    await up.status(RUNNING)
    await up.status(COMPLETED, text="done")

    assert [s.status for s in queue.states()] == [
        Status.RUNNING,
        Status.RUNNING,
        Status.WAITING,
        Status.RUNNING,
        Status.COMPLETED,
    ]
    assert queue.states()[2].waiting_reason is WaitingReason.APPROVAL
    assert queue.statuses[2].status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert queue.status_meta(1)[STATUS_META_KEY]["node"] == "one"
    assert queue.status_meta(0)["dev.accord/spent"] == 1.0
    assert set(queue.status_meta(1)) == {STATUS_META_KEY}  # no task metadata: none written
    # A message only where there is something to say (A2A 1.0: at least one part), carrying
    # the status it was sent with too; a bare change of state has none.
    said = [s.status.HasField("message") for s in queue.statuses]
    assert said == [False, True, True, False, True]
    for update in queue.statuses[1:3]:
        assert update.status.message.parts
        meta = MessageToDict(update.status.message)["metadata"][STATUS_META_KEY]
        assert meta == queue.status_meta(queue.statuses.index(update))[STATUS_META_KEY]
    assert up.current is Status.COMPLETED


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (Status.QUEUED, WAITING),
        (Status.QUEUED, COMPLETED),
        (Status.WAITING, COMPLETED),
        (Status.COMPLETED, RUNNING),
        (Status.FAILED, RUNNING),
        (Status.COMPLETED, COMPLETED),
    ],
)
async def test_an_illegal_transition_is_refused_and_nothing_is_emitted(
    current: Status, target: ContractState
) -> None:
    up, queue = updater(current)
    with pytest.raises(AccordError) as refused:
        await up.status(target)
    assert refused.value.code is ErrorCode.CONTRACT_VIOLATION
    assert refused.value.details["requirement"] == "STATUS-003"
    assert queue.events == []
    assert up.current is current


async def test_nothing_follows_a_failure() -> None:
    up, queue = updater(Status.RUNNING)
    await up.fail(AccordError(ErrorCode.POLICY_DENIED, "no"), node="policy")
    with pytest.raises(AccordError):
        await up.fail(AccordError(ErrorCode.INTERNAL))
    with pytest.raises(AccordError):
        await up.complete()  # the SDK's own method goes through the same check
    assert len(queue.statuses) == 1
    assert queue.last_error_code() == "POLICY_DENIED"
    parts = MessageToDict(queue.statuses[0].status.message)["parts"]
    assert {"kind": ERROR_DATA_KIND, "code": "POLICY_DENIED"}.items() <= parts[-1]["data"].items()
    assert queue.status_meta()[STATUS_META_KEY]["node"] == "policy"


async def test_a_canceled_failure_is_the_a2a_canceled_state() -> None:
    up, queue = updater(Status.WAITING)
    await up.fail(AccordError(ErrorCode.CANCELED, "canceled by its caller"))
    assert queue.statuses[0].status.state == TaskState.TASK_STATE_CANCELED
    assert queue.last_error_code() == "CANCELED"


async def test_the_sdk_methods_are_checked_and_described_too() -> None:
    up, queue = updater(Status.QUEUED)
    with pytest.raises(AccordError):
        await up.requires_input()  # queued -> waiting is not a contract transition
    await up.start_work()
    said = Message(message_id="m-1", role=Role.ROLE_AGENT, parts=[Part(text="it broke")])
    await up.failed(said)

    assert [s.status for s in queue.states()] == [Status.RUNNING, Status.FAILED]
    assert queue.status_meta(0)[STATUS_META_KEY]["status"] == "running"
    assert not queue.statuses[0].status.HasField("message")  # nothing said: no message
    # A failure without an Accord error gets the contract's default code, in both places,
    # after the caller's own parts.
    assert queue.status_meta()[STATUS_META_KEY]["error"]["code"] == "INTERNAL"
    parts = MessageToDict(queue.statuses[-1].status.message)["parts"]
    assert parts[0] == {"text": "it broke"}
    assert parts[1]["data"]["kind"] == ERROR_DATA_KIND
