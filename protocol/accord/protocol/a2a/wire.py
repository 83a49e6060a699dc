"""What an Accord agent writes on the A2A wire beside the A2A state, and how to read it back.

Every status an Accord agent emits carries, under :data:`STATUS_META_KEY`, the contract status
and what qualifies it::

    {"status": "failed", "waitingReason": null, "error": {AccordError.to_dict()}, "node": "..."}

It travels where A2A puts extension metadata without a message: the TaskStatusUpdateEvent's
``metadata`` (the SDK merges it into the Task's ``metadata``, so GetTask and ListTasks carry the
current status there). A status has a message only when it says something to a person (a
progress note, a question, why it failed or declined): A2A 1.0 requires a message to have a
part, and an empty filler part would be shown as the agent's words. Such a message repeats the
status it was sent with in its own metadata, so a history copy still names its node and status.
Readers take the task's (or the update's) metadata first; a peer of 0.1 or 0.2 wrote it only
in the status message's, which they still read (compat.STATUS_META_IN_MESSAGE).

Keys are camelCase only (mesh contract 2.0). A decline is ``failed`` here and A2A
TASK_STATE_REJECTED in the state, which readers turn into :attr:`ContractState.declined`.
A failed task repeats its error as a DataPart ``{"kind": ERROR_DATA_KIND, ...error dict}`` so a
client that ignores metadata still reads the same code. Readers here accept both the protobuf
types of a2a-sdk and the wire JSON (camelCase dicts), so the server, the Python client and tests
share one implementation.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf import json_format, struct_pb2
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message as ProtoMessage

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    ERROR_DATA_KIND,
    STATUS_META_KEY,
    WAITING_REASON_KEY,
)
from accord.contracts.status import (
    WITH_ERROR,
    A2AState,
    ContractState,
    Status,
    WaitingReason,
    from_a2a,
    to_a2a,
)
from accord.contracts.status_meta import meta_waiting_reason

# -- writing --------------------------------------------------------------------------------


def status_meta(
    state: ContractState, *, error: AccordError | None = None, node: str | None = None
) -> dict[str, Any]:
    """The value stored under :data:`STATUS_META_KEY`."""
    reason = state.waiting_reason.value if state.waiting_reason else None
    return {
        "status": state.status.value,
        WAITING_REASON_KEY: reason,
        "error": error.to_dict() if error is not None else None,
        "node": node,
    }


def status_metadata(
    state: ContractState, *, error: AccordError | None = None, node: str | None = None
) -> dict[str, Any]:
    """The metadata of a status update (and of its task) that carries its contract status."""
    return {STATUS_META_KEY: status_meta(state, error=error, node=node)}


def error_data(error: AccordError) -> dict[str, Any]:
    """The DataPart body that repeats a failed task's error."""
    return {"kind": ERROR_DATA_KIND, **error.to_dict()}


def a2a_task_state(state: ContractState) -> str:
    """The TaskState (by enum name, which protobuf constructors accept) of a contract state."""
    return to_a2a(state).value


def status_message(
    state: ContractState,
    *,
    task_id: str,
    context_id: str,
    text: str = "",
    data: Mapping[str, Any] | None = None,
    error: AccordError | None = None,
    node: str | None = None,
    parts: Sequence[Part] = (),
    message_id: str | None = None,
) -> Message | None:
    """An agent message for a status update: ``parts``, text, optional data, the error DataPart
    (which a failure always has); None when there is nothing to say (see the module doc).
    ``message_id``: the event's id when the agent has one it can give again (a log's sequence
    number: a resumed subscription names its events by it), else a fresh one."""
    parts = list(parts)
    if text:
        parts.append(Part(text=text))
    if data is not None:
        parts.append(data_part(data))
    if error is not None:
        parts.append(data_part(error_data(error)))
    if not parts:
        return None
    message = Message(
        message_id=message_id or uuid.uuid4().hex,
        role=Role.ROLE_AGENT,
        task_id=task_id,
        context_id=context_id,
        parts=parts,
    )
    message.metadata.update(status_metadata(state, error=error, node=node))
    return message


def data_part(data: Mapping[str, Any]) -> Part:
    # Struct.update (protobuf's own helper) builds the same Value as json_format.ParseDict at a
    # third of the cost, which every data part of every event paid (#16).
    struct = struct_pb2.Struct()
    try:
        struct.update(data)
    except ValueError as exc:  # a value JSON has no type for (a datetime...): as ParseDict says
        raise json_format.ParseError(f"a data part holds JSON values only: {exc}") from None
    return Part(data=struct_pb2.Value(struct_value=struct), media_type="application/json")


def failed_status(
    error: AccordError, *, task_id: str, context_id: str, node: str | None = None
) -> TaskStatus:
    """A complete FAILED (or CANCELED, for code CANCELED) TaskStatus carrying the error."""
    state = ContractState(status=Status.FAILED, error_code=error.code)
    message = status_message(
        state, task_id=task_id, context_id=context_id, text=error.message, error=error, node=node
    )
    assert message is not None  # the error DataPart
    return TaskStatus(state=a2a_task_state(state), message=message)


# -- reading --------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """JSON from a protobuf Value: integral floats back to int (Value stores doubles)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


Metadata: TypeAlias = struct_pb2.Struct | Mapping[str, Any] | None
"""A task's or a status update's ``metadata``: protobuf, or the wire JSON."""


def _as_dict(message: ProtoMessage | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if message is None:
        return {}
    if isinstance(message, ProtoMessage):
        converted: dict[str, Any] = MessageToDict(message)
        return converted
    return message


def _entry(metadata: Any) -> dict[str, Any] | None:
    found = metadata.get(STATUS_META_KEY) if isinstance(metadata, Mapping) else None
    return dict(found) if isinstance(found, Mapping) else None


def read_status_meta(
    message: Message | Mapping[str, Any] | None, metadata: Metadata = None
) -> dict[str, Any] | None:
    """The :data:`STATUS_META_KEY` entry of a status: from ``metadata`` (the task's or the
    status update's, where an agent of 0.3 writes it), else from its message's."""
    found = _entry(_as_dict(metadata))
    if found is None:
        # compat.STATUS_META_IN_MESSAGE: agents of 0.1 and 0.2 wrote it there only.
        found = _entry(_as_dict(message).get("metadata"))
    return found


def read_error(
    message: Message | Mapping[str, Any] | None, metadata: Metadata = None
) -> AccordError | None:
    """The contract error of a status: metadata first, then its message's error DataPart."""
    meta = read_status_meta(message, metadata)
    if meta is not None and isinstance(meta.get("error"), Mapping):
        return AccordError.from_dict(plain(meta["error"]))
    for part in _as_dict(message).get("parts", []) or []:
        data = part.get("data") if isinstance(part, Mapping) else None
        if isinstance(data, Mapping) and data.get("kind") == ERROR_DATA_KIND:
            return AccordError.from_dict(plain(data))
    return None


def read_contract_state(
    status: TaskStatus | Mapping[str, Any], metadata: Metadata = None
) -> tuple[ContractState, AccordError | None]:
    """The contract state of an A2A TaskStatus (protobuf or wire JSON) with the ``metadata`` of
    its task or status update, and its error if failed (a decline too: TASK_STATE_REJECTED
    reads as failed and ``declined``).

    A peer that is not Accord gets the contract defaults (``from_a2a``); a failed task without
    a readable error gets one built from the default code.
    """
    if isinstance(status, TaskStatus):
        a2a = TaskState.Name(status.state)
        # Read as JSON once: the metadata and the error DataPart are both looked for in it.
        message: Mapping[str, Any] | None = (
            _as_dict(status.message) if status.HasField("message") else None
        )
    else:
        a2a = str(status.get("state", A2AState.SUBMITTED.value))
        raw = status.get("message")
        message = raw if isinstance(raw, Mapping) else None
    outer = _as_dict(metadata)  # read as JSON once too
    meta = read_status_meta(message, outer) or {}
    error = read_error(message, outer)
    try:
        state = from_a2a(
            a2a,
            waiting_reason=meta_waiting_reason(meta),
            error_code=error.code if error is not None else None,
        )
    except ValueError:
        # TASK_STATE_UNSPECIFIED or an unknown name from a foreign peer.
        state = ContractState(status=Status.FAILED, error_code=ErrorCode.CONTRACT_VIOLATION)
    if state.status in WITH_ERROR and (error is None or error.code != state.error_code):
        assert state.error_code is not None
        error = AccordError(state.error_code)
    return state, error if state.status in WITH_ERROR else None


def waiting_reason_of(
    status: TaskStatus | Mapping[str, Any], metadata: Metadata = None
) -> WaitingReason | None:
    state, _ = read_contract_state(status, metadata)
    return state.waiting_reason


def renderable(task: Task) -> bool:
    """Whether the SDK can write ``task`` as JSON (a number protobuf's JSON form cannot hold,
    such as NaN, would fail the whole answer it is part of: a listing of every such task)."""
    try:
        json_format.MessageToDict(task)
    except (ValueError, json_format.Error):
        return False
    return True
