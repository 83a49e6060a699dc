"""Status metadata (``dev.accord/status``): written camelCase only with five statuses (mesh
contract 2.0), and what agents of 0.1 and 0.2 wrote still read (until 0.4.0, accord.contracts
.compat): ``waiting_reason`` beside or instead of ``waitingReason``, and ``rejected``."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import STATUS_META_KEY
from accord.contracts.status import A2AState, ContractState, Status, WaitingReason
from accord.contracts.status_meta import STATUS_META_FIELDS, meta_status, meta_waiting_reason
from accord.protocol.a2a.wire import (
    read_contract_state,
    status_message,
    status_meta,
    status_metadata,
)

STATES = [
    ContractState(status=Status.RUNNING),
    ContractState(status=Status.WAITING, waiting_reason=WaitingReason.APPROVAL),
    ContractState(status=Status.FAILED, error_code=ErrorCode.UNAVAILABLE),
    ContractState(status=Status.FAILED, error_code=ErrorCode.NOT_FOUND, declined=True),
]


@pytest.mark.parametrize("state", STATES, ids=lambda s: s.status.value)
def test_metadata_is_written_in_camel_case_only(state: ContractState) -> None:
    meta = status_meta(state, error=AccordError(state.error_code) if state.error_code else None)
    assert tuple(meta) == STATUS_META_FIELDS
    assert not [key for key in meta if "_" in key], meta  # no snake_case key (contract 2.0)
    assert meta["status"] in {s.value for s in Status}


def test_a_decline_is_written_failed_and_read_back_declined_with_its_code() -> None:
    declined = ContractState(status=Status.FAILED, error_code=ErrorCode.NOT_FOUND, declined=True)
    error = AccordError(ErrorCode.NOT_FOUND, "no such order")
    message = status_message(declined, task_id="t-1", context_id="c-1", error=error)
    wire: dict[str, Any] = {"state": A2AState.REJECTED.value, "message": _json(message)}
    assert wire["message"]["metadata"][STATUS_META_KEY]["status"] == "failed"
    state, read = read_contract_state(wire)
    assert state == declined
    assert read is not None
    assert read.code is ErrorCode.NOT_FOUND


def _json(message: Any) -> dict[str, Any]:
    converted: dict[str, Any] = MessageToDict(message)
    return converted


# What a 0.2 agent wrote for a decline and for a wait (contract 1.2).
OLD_DECLINE = {
    "state": "TASK_STATE_REJECTED",
    "message": {
        "metadata": {
            STATUS_META_KEY: {
                "status": "rejected",
                "waitingReason": None,
                "waiting_reason": None,
                "error": {"code": "PERMISSION_DENIED", "retry": "stop", "message": "no"},
                "node": None,
            }
        }
    },
}
OLD_WAIT = {
    "state": "TASK_STATE_INPUT_REQUIRED",
    "message": {"metadata": {STATUS_META_KEY: {"status": "waiting", "waiting_reason": "approval"}}},
}


def test_what_a_0_2_agent_wrote_is_still_read() -> None:
    state, error = read_contract_state(OLD_DECLINE)
    assert (state.status, state.declined, state.error_code) == (
        Status.FAILED,
        True,
        ErrorCode.PERMISSION_DENIED,
    )
    assert error is not None
    assert error.code is ErrorCode.PERMISSION_DENIED
    waiting, _ = read_contract_state(OLD_WAIT)
    assert waiting.waiting_reason is WaitingReason.APPROVAL  # only the snake_case key was there


def test_the_metadata_readers_take_the_old_forms() -> None:
    assert meta_status({"status": "rejected"}) == (Status.FAILED, True)
    assert meta_status({"status": "failed"}) == (Status.FAILED, False)
    assert meta_status({"status": "bogus"}) is None
    assert meta_status({}) is None
    assert meta_waiting_reason({"waitingReason": "approval"}) == "approval"
    assert meta_waiting_reason({"waiting_reason": "approval"}) == "approval"
    assert meta_waiting_reason({"waitingReason": "input", "waiting_reason": "approval"}) == "input"
    assert meta_waiting_reason({}) is None


def test_a_status_with_nothing_to_say_has_no_message() -> None:
    """A2A 1.0 requires a message to have a part: a bare change of state is the update's (and
    the task's) metadata only, with no filler part a client would show as the agent's words."""
    running = ContractState(status=Status.RUNNING)
    assert status_message(running, task_id="t-1", context_id="c-1") is None
    said = status_message(running, task_id="t-1", context_id="c-1", text="checking", node="one")
    assert said is not None
    assert [p.text for p in said.parts] == ["checking"]
    assert _json(said)["metadata"] == status_metadata(running, node="one")


def test_the_task_metadata_is_read_before_the_status_message() -> None:
    """0.3 writes the current status in the task's metadata; where a message is there too (a
    history copy's, an old peer's) the task's metadata wins, and the message is read only when
    the task has none (compat.STATUS_META_IN_MESSAGE, what 0.1 and 0.2 wrote)."""
    waiting = ContractState(status=Status.WAITING, waiting_reason=WaitingReason.APPROVAL)
    task_meta = status_metadata(waiting)
    stale = {"metadata": status_metadata(ContractState(status=Status.RUNNING))}
    status = {"state": A2AState.INPUT_REQUIRED.value, "message": stale}
    assert read_contract_state(status, task_meta)[0] == waiting
    assert read_contract_state({"state": A2AState.INPUT_REQUIRED.value}, task_meta)[0] == waiting
    old, _ = read_contract_state(OLD_WAIT, {"dev.accord/spent": 3})  # no status in it
    assert old.waiting_reason is WaitingReason.APPROVAL
    failed = {"state": A2AState.FAILED.value}
    error = AccordError(ErrorCode.UNAVAILABLE, "down")
    meta = status_metadata(ContractState(status=Status.FAILED, error_code=error.code), error=error)
    state, read = read_contract_state(failed, meta)
    assert state.error_code is ErrorCode.UNAVAILABLE
    assert read is not None
    assert read.message == "down"
