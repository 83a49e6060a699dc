"""Reading a turn from the SDK's RequestContext: the principal and envelope the gate handed on
(not parsed from the message again), the stored envelope of a continuation, skill, parts,
input schema, and what earlier turns left in the task's metadata."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.types import Message, Part, Role, SendMessageRequest, Task, TaskState, TaskStatus
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict

from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    DELEGATION_EXTENSION_URI,
    ENVELOPE_META_KEY,
    SKILL_TASK_META_KEY,
    SPENT_META_KEY,
    STATE_META_KEY,
)
from accord.protocol.a2a.server.skill_schemas import SkillSchemas
from accord.protocol.a2a.server.turn import ENVELOPE_STATE_KEY, PRINCIPAL_STATE_KEY, read_turn
from accord.protocol.a2a.wire import data_part
from accord.protocol.auth import Principal
from tests.protocol.a2a.agent_app import CONTRACT
from tests.protocol.a2a.helpers import envelope

CUSTOMER = Principal("C-01", frozenset({"customer"}))
SERVICE = Principal("svc:batch", frozenset({"service"}))
SCHEMAS = SkillSchemas(CONTRACT)


def the_envelope(user: str = "C-01") -> DelegationEnvelope:
    return DelegationEnvelope.model_validate(envelope(user)[DELEGATION_EXTENSION_URI])


def message(*parts: Part, metadata: dict[str, Any] | None = None) -> Message:
    sent = Message(message_id="m-1", role=Role.ROLE_USER, parts=list(parts))
    if metadata:
        sent.metadata.update(metadata)
    return sent


def stored_task(meta: dict[str, Any]) -> Task:
    task = Task(
        id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED)
    )
    task.metadata.update(meta)
    return task


def read(
    sent: Message,
    *,
    principal: Principal | None = CUSTOMER,
    handed_on: DelegationEnvelope | None = None,
    task: Task | None = None,
) -> Any:
    state: dict[str, Any] = {ENVELOPE_STATE_KEY: handed_on}
    if principal is not None:
        state[PRINCIPAL_STATE_KEY] = principal
    context = RequestContext(
        ServerCallContext(state=state),
        SendMessageRequest(message=sent),
        task_id="t-1",
        context_id="c-1",
        task=task,
    )
    return read_turn(context, CONTRACT, SCHEMAS, context_id="c-1")


def test_a_first_turn_reads_principal_skill_text_and_data() -> None:
    turn = read(message(Part(text="hello"), Part(text="again"), data_part({"mode": "ask", "n": 2})))
    assert turn.principal == CUSTOMER
    assert turn.envelope is None  # an end user who brought none: the executor supplies one
    assert turn.skill.id == "echo"
    assert turn.text == "hello\nagain"
    assert turn.data == {"mode": "ask", "n": 2}  # integral numbers are ints again
    assert type(turn.data["n"]) is int
    assert turn.is_continuation is False
    assert (turn.task_id, turn.context_id, turn.state, turn.spent_units) == ("t-1", "c-1", {}, 0)


def test_without_a_verified_principal_there_is_no_turn() -> None:
    with pytest.raises(AccordError) as refused:
        read(message(data_part({"mode": "complete"})), principal=None)
    assert refused.value.code is ErrorCode.UNAUTHENTICATED


def test_the_envelope_is_the_one_the_gate_handed_on_not_a_second_parse() -> None:
    handed_on = the_envelope()
    # The message's own metadata is not read again: even a malformed envelope there is the
    # gate's business (it refused or parsed it before the SDK created the task).
    sent = message(data_part({"mode": "complete"}), metadata={DELEGATION_EXTENSION_URI: "junk"})
    turn = read(sent, principal=SERVICE, handed_on=handed_on)
    assert turn.envelope is handed_on


def test_a_continuation_without_an_envelope_continues_under_the_stored_one() -> None:
    stored = the_envelope().model_dump(mode="json", exclude_none=True)
    task = stored_task(
        {
            ENVELOPE_META_KEY: stored,
            SPENT_META_KEY: 2,
            STATE_META_KEY: {"asked": True},
            SKILL_TASK_META_KEY: "echo",
        }
    )
    turn = read(message(Part(text="42")), task=task)
    assert turn.is_continuation is True
    assert turn.envelope is not None
    assert turn.envelope.tenant.user == "C-01"
    assert turn.spent_units == 2
    assert turn.state == {"asked": True}


def test_a_stored_envelope_is_checked_for_acting_on_behalf_again() -> None:
    stored = the_envelope("C-02").model_dump(mode="json", exclude_none=True)
    with pytest.raises(AccordError) as refused:
        read(message(Part(text="42")), task=stored_task({ENVELOPE_META_KEY: stored}))
    assert refused.value.code is ErrorCode.PERMISSION_DENIED
    assert refused.value.details["requirement"] == "ENV-004"


def test_continuations_are_not_schema_checked() -> None:
    turn = read(message(data_part({"anything": "goes"})), task=stored_task({}))
    assert turn.data == {"anything": "goes"}


def test_an_unknown_skill_is_invalid_input_naming_the_skills() -> None:
    with pytest.raises(AccordError) as refused:
        read(message(data_part({"mode": "complete"}), metadata={"skill": "nope"}))
    assert refused.value.code is ErrorCode.INVALID_INPUT
    assert refused.value.details == {"field": "metadata.skill", "skills": ["echo"]}


def test_a_data_part_must_be_an_object() -> None:
    listed = Part(data=ParseDict([1, 2], struct_pb2.Value()))
    with pytest.raises(AccordError) as refused:
        read(message(listed))
    assert refused.value.code is ErrorCode.INVALID_INPUT
    assert refused.value.details == {"field": "parts.data"}


@pytest.mark.parametrize(
    ("data", "field", "rule"),
    [
        (None, "(root)", "required"),  # no DataPart: validated as {}
        ({"mode": "fly"}, "mode", "enum"),
        ({"mode": "complete", "extra": 1}, "(root)", "additionalProperties"),
    ],
)
def test_a_first_turn_input_breaking_the_schema_is_invalid_input(
    data: dict[str, Any] | None, field: str, rule: str
) -> None:
    parts = [data_part(data)] if data is not None else []
    with pytest.raises(AccordError) as refused:
        read(message(*parts))
    assert refused.value.code is ErrorCode.INVALID_INPUT
    assert refused.value.details == {"field": field, "rule": rule}
