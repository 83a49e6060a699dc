"""What ``ContractExecutor.run()`` sees (a :class:`Turn`) and returns (:class:`Completed`,
:class:`NeedsInput`, :class:`Rejected`, or :class:`Reply`: a message instead of a task), and
how a turn is read from the SDK's ``RequestContext``.

The principal and the delegation envelope are not read from the message again: the gate
verified the credential, parsed the envelope and checked acting on behalf before the SDK
created the task, and the server hands both on in ``ServerCallContext.state``
(:data:`PRINCIPAL_STATE_KEY`, :data:`ENVELOPE_STATE_KEY`). A later turn that brings no envelope
continues under the one the task stored at its first turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from a2a.server.agent_execution import RequestContext
from a2a.types import Artifact, Message, Part
from google.protobuf.json_format import MessageToDict

from accord.contracts.agents import AgentContract, Skill
from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    CONTRACT_VERSION_META_KEY,
    ENVELOPE_META_KEY,
    SKILL_META_KEY,
    SKILL_TASK_META_KEY,
    SPENT_META_KEY,
    STATE_META_KEY,
    TOOL_CALLS_SPENT_META_KEY,
)
from accord.contracts.status import WaitingReason
from accord.protocol.a2a.server.delegation import check_on_behalf
from accord.protocol.a2a.server.skill_gate import admit
from accord.protocol.a2a.server.skill_schemas import SkillSchemas
from accord.protocol.a2a.wire import (
    plain,
)
from accord.protocol.auth import Principal

PRINCIPAL_STATE_KEY: Final = "accord.principal"
"""ServerCallContext.state key under which the server puts the verified Principal."""

ENVELOPE_STATE_KEY: Final = "accord.envelope"
"""Request scope and ServerCallContext.state key of the envelope the gate parsed from the
request's message (None when it brought none)."""


@dataclass
class Turn:
    principal: Principal
    envelope: DelegationEnvelope | None
    task_id: str
    context_id: str
    skill: Skill
    data: dict[str, Any] | None
    text: str
    state: dict[str, Any]
    is_continuation: bool
    spent_units: int = 0
    """Budget units the earlier turns of this task spent (the budget guard counts on)."""
    spent_tool_calls: int = 0
    """Tool calls the earlier turns of this task spent (likewise)."""
    message_id: str | None = None
    """The id of this turn's A2A message (an agent that records its history keeps it)."""
    parts: tuple[Part, ...] = ()
    """Every part of this turn's message as sent (files, several texts, more DataParts):
    ``text`` and ``data`` are the usual reading of them."""


@dataclass
class Completed:
    """The task is done: ``data`` (checked against the skill's output schema) becomes the
    artifact named ``result`` that every Accord client reads; ``artifacts`` (built with
    :mod:`accord.protocol.a2a.server.parts`: text, files, more data) follow it, in order.

    An answer with no structured data (``data`` None or empty, which the output schema must
    accept as ``{}``) carries no ``result`` at all: only its own artifacts, so a client that
    reads the first artifact finds the agent's text or file, not an empty DataPart."""

    data: dict[str, Any] | None = None
    text: str = ""
    artifacts: Sequence[Artifact] = field(default_factory=tuple)


@dataclass
class Rejected:
    """The agent declines the request: A2A TASK_STATE_REJECTED, in the contract ``failed`` with
    ``code`` and ``declined`` set; nothing went wrong, the agent decided not to do it. ``code``
    says why, and must be one of :data:`~accord.contracts.status.REJECTABLE` (a decline is
    never worth retrying as is)."""

    reason: str
    code: ErrorCode = ErrorCode.POLICY_DENIED
    details: dict[str, Any] | None = None


@dataclass
class Reply:
    """One agent Message and no task (A2A 1.0: a message may be answered with a Message): the
    answer of a skill that declares ``reply: message``, or of any first turn of an executor with
    ``may_reply`` that opened no task yet. ``data``, when given, is checked against the skill's
    output schema like a result."""

    text: str = ""
    data: dict[str, Any] | None = None
    parts: Sequence[Part] = field(default_factory=tuple)  # after the text and the data


@dataclass
class NeedsInput:
    question: str
    data: dict[str, Any] | None = None
    reason: WaitingReason = WaitingReason.INPUT


def read_turn(
    context: RequestContext, contract: AgentContract, schemas: SkillSchemas, *, context_id: str
) -> Turn:
    """The turn of the message in ``context``; raises the contract error that refuses it.

    ``context_id`` is the task's own context (a follow-up may come without one).
    """
    handed_on = context.call_context.state
    principal = handed_on.get(PRINCIPAL_STATE_KEY)
    if not isinstance(principal, Principal):
        raise AccordError(ErrorCode.UNAUTHENTICATED)
    message = context.message or Message()
    current = context.current_task
    is_continuation = current is not None
    task_meta: dict[str, Any] = (
        plain(MessageToDict(current.metadata)) if current is not None else {}
    )

    envelope = handed_on.get(ENVELOPE_STATE_KEY)
    if not isinstance(envelope, DelegationEnvelope):
        envelope = None
        if ENVELOPE_META_KEY in task_meta:
            envelope = DelegationEnvelope.model_validate(task_meta[ENVELOPE_META_KEY])
            check_on_behalf(principal, envelope)

    skill = _skill(contract, task_meta.get(SKILL_TASK_META_KEY) or _asked_skill(message))
    # The gate admitted a first message already; a continuation (maybe with an envelope of
    # its own) is held to the same skill's rules here.
    admit(skill, principal, envelope)
    text, data = read_parts(message)
    if not is_continuation:
        schemas.check_input(skill, data if data is not None else {})

    state = task_meta.get(STATE_META_KEY)
    spent = task_meta.get(SPENT_META_KEY, 0)
    tools_spent = task_meta.get(TOOL_CALLS_SPENT_META_KEY, 0)
    return Turn(
        principal=principal,
        envelope=envelope,
        task_id=str(context.task_id),
        context_id=context_id,
        skill=skill,
        data=data,
        text=text,
        state=dict(state) if isinstance(state, dict) else {},
        is_continuation=is_continuation,
        spent_units=spent if isinstance(spent, int) else 0,
        spent_tool_calls=tools_spent if isinstance(tools_spent, int) else 0,
        message_id=message.message_id or None,
        parts=tuple(message.parts),
    )


def asked_skill(context: RequestContext, contract: AgentContract) -> Skill | None:
    """The skill a new task's message asks for, before anything is read (None: unknown; the
    turn's reading then refuses it)."""
    try:
        return _skill(contract, _asked_skill(context.message or Message()))
    except AccordError:
        return None


def asked_contract_version(context: RequestContext) -> str | None:
    """The contract version the task speaks: the one its first turn named (kept in the task's
    metadata), else the one this message names; None when neither names one."""
    current = context.current_task
    if current is not None:
        kept = current.metadata.fields.get(CONTRACT_VERSION_META_KEY)
        if kept is not None and kept.HasField("string_value"):
            return str(kept.string_value)
        return None  # a task started without a version keeps speaking the newest
    named = (context.message or Message()).metadata.fields.get(CONTRACT_VERSION_META_KEY)
    if named is None:
        return None
    if not named.HasField("string_value"):
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            "the contract version asked for must be a string",
            {"field": f"metadata.{CONTRACT_VERSION_META_KEY}"},
        )
    return str(named.string_value)


def _skill(contract: AgentContract, skill_id: Any) -> Skill:
    try:
        return contract.skill(str(skill_id)) if skill_id else contract.skills[0]
    except KeyError:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"unknown skill {skill_id!r}",
            {"field": f"metadata.{SKILL_META_KEY}", "skills": [s.id for s in contract.skills]},
        ) from None


def _asked_skill(message: Message) -> Any:
    """The skill the message's metadata names (one key: the rest is not converted)."""
    value = message.metadata.fields.get(SKILL_META_KEY)
    return MessageToDict(value) if value is not None else None


def read_parts(message: Message) -> tuple[str, dict[str, Any] | None]:
    """The message's text (its text parts, joined) and its first DataPart, which must be an
    object."""
    texts: list[str] = []
    data: dict[str, Any] | None = None
    for part in message.parts:
        if part.HasField("text"):
            texts.append(part.text)
        elif part.HasField("data") and data is None:
            value = plain(MessageToDict(part.data))
            if not isinstance(value, dict):
                raise AccordError(
                    ErrorCode.INVALID_INPUT,
                    "the DataPart must be an object",
                    {"field": "parts.data"},
                )
            data = value
    return "\n".join(texts), data
