"""ContractExecutor: an a2a-sdk AgentExecutor that keeps the Accord contract for an agent.

Subclasses implement :meth:`ContractExecutor.run` and return :class:`Completed` or
:class:`NeedsInput` (or raise :class:`AccordError`). Everything around it is done here, once:

* the delegation envelope is read from message metadata, checked against the principal
  (acting on behalf) and its budget and deadline are enforced;
* the input DataPart is validated against the skill's input schema, the output against the
  output schema;
* every status is checked as a legal contract transition before it is emitted, and carries the
  contract status (and error) in its metadata; a failure also carries the error as a DataPart;
* the agent's per-task scratch (``Turn.state``) is persisted in the task's metadata.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import (
    Artifact,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.json_format import MessageToDict
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from opentelemetry import trace
from opentelemetry.trace import Span

from accord.contracts.agents import AgentContract, Skill
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant, parse_envelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    ENVELOPE_META_KEY,
    SKILL_META_KEY,
    SKILL_TASK_META_KEY,
    SPENT_META_KEY,
    STATE_META_KEY,
)
from accord.contracts.status import (
    ContractState,
    Status,
    WaitingReason,
    check_transition,
    from_a2a,
)
from accord.protocol.a2a.wire import (
    a2a_task_state,
    data_part,
    failed_status,
    plain,
    status_message,
)
from accord.protocol.auth import Principal
from accord.protocol.settings import current
from accord.protocol.telemetry import bind_task, instruments, mark_error, spans
from accord.protocol.telemetry import span as telemetry_span

logger = logging.getLogger(__name__)

PRINCIPAL_STATE_KEY: Final = "accord.principal"
"""ServerCallContext.state key under which the server puts the verified Principal."""

DEFAULT_BUDGET_UNITS: Final = 100
DEFAULT_BUDGET_TOOL_CALLS: Final = 50
ARTIFACT_NAME: Final = "result"


# -- what run() sees and returns -------------------------------------------------------------


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
    message_id: str | None = None  # the A2A message of this turn


@dataclass
class Completed:
    data: dict[str, Any]
    text: str = ""


@dataclass
class NeedsInput:
    question: str
    data: dict[str, Any] | None = None
    reason: WaitingReason = WaitingReason.INPUT


# -- emitting, with the contract checked ----------------------------------------------------


@dataclass
class _Emitter:
    """Emits status events for one task, refusing illegal contract transitions."""

    queue: EventQueue
    task_id: str
    context_id: str
    current: Status
    extra_meta: dict[str, Any] = field(default_factory=dict)
    agent: str = ""
    span: Span | None = None  # the turn's invoke_agent span: a failure's code goes on it

    async def status(
        self,
        state: ContractState,
        *,
        text: str = "",
        data: dict[str, Any] | None = None,
        error: AccordError | None = None,
        node: str | None = None,
        task_meta: dict[str, Any] | None = None,
    ) -> None:
        # A progress note while running is not a transition; everything else must be legal.
        if not (state.status is Status.RUNNING and self.current is Status.RUNNING):
            check_transition(self.current, state.status)
        message = status_message(
            state,
            task_id=self.task_id,
            context_id=self.context_id,
            text=text,
            data=data,
            error=error,
            node=node,
        )
        status = TaskStatus(state=a2a_task_state(state), message=message)
        status.timestamp.FromDatetime(datetime.now(UTC))
        event = TaskStatusUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, status=status
        )
        if task_meta:
            event.metadata.update(task_meta)
        await self.queue.enqueue_event(event)
        if state.status is not self.current:
            self._measure(state.status, error)
        self.current = state.status

    async def fail(self, error: AccordError, *, node: str | None = None) -> None:
        status = failed_status(error, task_id=self.task_id, context_id=self.context_id, node=node)
        check_transition(self.current, Status.FAILED)
        status.timestamp.FromDatetime(datetime.now(UTC))
        await self.queue.enqueue_event(
            TaskStatusUpdateEvent(task_id=self.task_id, context_id=self.context_id, status=status)
        )
        self._measure(Status.FAILED, error)
        self.current = Status.FAILED

    def _measure(self, status: Status, error: AccordError | None) -> None:
        """Tasks by status in the metrics; the status (and a failure's code) on the span."""
        measured = {spans.GEN_AI_AGENT_NAME: self.agent, spans.STATUS: status.value}
        if error is not None and status is Status.FAILED:
            measured[spans.ERROR_TYPE] = error.code.value
        instruments.tasks.add(1, measured)
        if self.span is not None:
            self.span.set_attribute(spans.STATUS, status.value)
            if error is not None and status is Status.FAILED:
                mark_error(self.span, error)


class Progress:
    """Handed to ``run()``: emits WORKING status updates naming the current step."""

    def __init__(self, emitter: _Emitter) -> None:
        self._emitter = emitter

    async def update(
        self, text: str, *, node: str | None = None, data: dict[str, Any] | None = None
    ) -> None:
        await self._emitter.status(
            ContractState(status=Status.RUNNING), text=text, node=node, data=data
        )


# -- the executor ---------------------------------------------------------------------------


class ContractExecutor(AgentExecutor):
    """Base class of every Accord agent's executor; see the module docstring."""

    def __init__(
        self,
        contract: AgentContract,
        *,
        units_per_turn: int = 1,
        tool_calls_per_turn: int = 0,
        envelope_required_for_services: bool = True,
    ) -> None:
        self.contract = contract
        self.units_per_turn = units_per_turn
        self.tool_calls_per_turn = tool_calls_per_turn
        self.envelope_required_for_services = envelope_required_for_services
        self._input_validators = {
            s.id: Draft202012Validator(s.input_schema) for s in contract.skills
        }
        self._output_validators = {
            s.id: Draft202012Validator(s.output_schema) for s in contract.skills
        }

    # -- to implement -----------------------------------------------------------------------
    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        raise NotImplementedError

    async def on_cancel(self, task_id: str) -> None:
        """Optional hook: release what the task holds (children, locks). Default: nothing."""

    # -- AgentExecutor ----------------------------------------------------------------------
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = str(context.task_id)
        # One INTERNAL span per turn, under the request's SERVER span (accord.protocol.telemetry).
        attributes = spans.agent_attributes(self.contract.name, {spans.TASK_ID: task_id})
        with (
            bind_task(task_id),
            telemetry_span(f"{spans.INVOKE_AGENT} {self.contract.name}", attributes=attributes),
        ):
            await self._execute(context, event_queue, task_id)

    async def _execute(
        self, context: RequestContext, event_queue: EventQueue, task_id: str
    ) -> None:
        message = context.message
        current = context.current_task
        # A follow-up without contextId gets a fresh random one: the task's own context wins.
        context_id = current.context_id if current is not None else str(context.context_id)
        active = trace.get_current_span()
        active.set_attribute(spans.GEN_AI_CONVERSATION_ID, context_id)
        if current is None:
            task = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[message] if message is not None else [],
            )
            await event_queue.enqueue_event(task)
            status = Status.QUEUED
        else:
            status = from_a2a(TaskState.Name(current.status.state)).status
        emitter = _Emitter(
            event_queue, task_id, context_id, status, agent=self.contract.name, span=active
        )
        try:
            turn = self._prepare(context, current, task_id, context_id)
        except AccordError as error:
            await emitter.fail(error)
            return
        await self._run_turn(turn, emitter, current)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = str(context.task_id)
        try:
            await self.on_cancel(task_id)
        except Exception:  # the task is canceled either way; the hook's fault is logged
            logger.exception("on_cancel hook failed for task %s", task_id)
        if task is None:
            return
        error = AccordError(ErrorCode.CANCELED, "the task was canceled by its caller")
        current = from_a2a(TaskState.Name(task.status.state)).status
        emitter = _Emitter(event_queue, task_id, task.context_id, current, agent=self.contract.name)
        await emitter.fail(error)

    # -- internals --------------------------------------------------------------------------
    def _prepare(
        self, context: RequestContext, current: Task | None, task_id: str, context_id: str
    ) -> Turn:
        principal = context.call_context.state.get(PRINCIPAL_STATE_KEY)
        if not isinstance(principal, Principal):
            raise AccordError(ErrorCode.UNAUTHENTICATED)
        message = context.message or Message()
        meta = MessageToDict(message.metadata) if message.HasField("metadata") else {}
        task_meta = plain(MessageToDict(current.metadata)) if current is not None else {}
        is_continuation = current is not None

        envelope = parse_envelope(
            meta,
            required=(
                self.envelope_required_for_services and principal.is_service and not is_continuation
            ),
        )
        if envelope is None and ENVELOPE_META_KEY in task_meta:
            envelope = DelegationEnvelope.model_validate(task_meta[ENVELOPE_META_KEY])
        if envelope is not None:
            check_on_behalf(principal, envelope)

        skill_id = task_meta.get(SKILL_TASK_META_KEY) or meta.get(SKILL_META_KEY)
        try:
            skill = self.contract.skill(str(skill_id)) if skill_id else self.contract.skills[0]
        except KeyError:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"unknown skill {skill_id!r}",
                {
                    "field": f"metadata.{SKILL_META_KEY}",
                    "skills": [s.id for s in self.contract.skills],
                },
            ) from None

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
        if not is_continuation:
            _validate(
                self._input_validators[skill.id],
                data if data is not None else {},
                ErrorCode.INVALID_INPUT,
                "input",
            )

        state = task_meta.get(STATE_META_KEY)
        return Turn(
            principal=principal,
            envelope=envelope,
            task_id=task_id,
            context_id=context_id,
            skill=skill,
            data=data,
            text="\n".join(texts),
            state=dict(state) if isinstance(state, dict) else {},
            is_continuation=is_continuation,
            message_id=message.message_id or None,
        )

    def _effective_envelope(self, turn: Turn) -> DelegationEnvelope:
        if turn.envelope is not None:
            return turn.envelope
        return default_envelope(turn.principal, turn.context_id, turn.text or turn.skill.name)

    async def _run_turn(self, turn: Turn, emitter: _Emitter, current: Task | None) -> None:
        envelope = self._effective_envelope(turn)
        spent = 0
        if current is not None:
            raw = plain(MessageToDict(current.metadata)).get(SPENT_META_KEY, 0)
            spent = int(raw) if isinstance(raw, int) else 0
        budget = envelope.budget
        try:
            if budget.units - spent < self.units_per_turn:
                raise AccordError(
                    ErrorCode.BUDGET_EXHAUSTED,
                    f"budget has {budget.units - spent} units left; a turn costs "
                    f"{self.units_per_turn}",
                    {"units": budget.units, "spent": spent, "per_turn": self.units_per_turn},
                )
            if budget.tool_calls < self.tool_calls_per_turn:
                raise AccordError(
                    ErrorCode.BUDGET_EXHAUSTED,
                    f"budget allows {budget.tool_calls} tool calls; a turn needs "
                    f"{self.tool_calls_per_turn}",
                    {"tool_calls": budget.tool_calls},
                )
            remaining_s = (budget.deadline - datetime.now(UTC)).total_seconds()
            if remaining_s <= 0:
                raise AccordError(
                    ErrorCode.RETRYABLE_TIMEOUT,
                    "the delegation deadline has already passed",
                    {"deadline": budget.deadline.isoformat()},
                )
        except AccordError as error:
            await emitter.fail(error)
            return

        spent += self.units_per_turn
        task_meta: dict[str, Any] = {SPENT_META_KEY: spent, SKILL_TASK_META_KEY: turn.skill.id}
        if turn.envelope is not None:
            # A caller's envelope binds every later turn (its deadline is the caller's). A
            # synthesised one is not kept: an end user who answers a question tomorrow gets a
            # fresh per-turn deadline, while the units spent keep counting against the budget.
            task_meta[ENVELOPE_META_KEY] = envelope.model_dump(mode="json", exclude_none=True)
        await emitter.status(ContractState(status=Status.RUNNING), task_meta=task_meta)
        try:
            async with asyncio.timeout(remaining_s):
                outcome = await self.run(turn, Progress(emitter))
            await self._report(outcome, turn, emitter)
        except TimeoutError:
            await emitter.fail(
                AccordError(
                    ErrorCode.RETRYABLE_TIMEOUT,
                    "the delegation deadline passed while the agent was working",
                    {"deadline": budget.deadline.isoformat()},
                )
            )
        except AccordError as error:
            if emitter.current not in (Status.COMPLETED, Status.FAILED):
                await emitter.fail(error)
            else:
                logger.error("task %s: error after a terminal state: %r", turn.task_id, error)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("task %s: run() raised", turn.task_id)
            await emitter.fail(AccordError(ErrorCode.INTERNAL, "the agent failed unexpectedly"))

    async def _report(self, outcome: Completed | NeedsInput, turn: Turn, emitter: _Emitter) -> None:
        task_meta = {STATE_META_KEY: turn.state}
        if isinstance(outcome, Completed):
            try:
                _validate(
                    self._output_validators[turn.skill.id],
                    outcome.data,
                    ErrorCode.CONTRACT_VIOLATION,
                    "output",
                )
            except AccordError as error:
                logger.error(
                    "task %s: output breaks the skill schema: %s", turn.task_id, error.message
                )
                raise AccordError(
                    ErrorCode.CONTRACT_VIOLATION,
                    "the agent's answer broke its declared output schema",
                    error.details,
                ) from None
            parts = [data_part(outcome.data)]
            await emitter.queue.enqueue_event(
                TaskArtifactUpdateEvent(
                    task_id=emitter.task_id,
                    context_id=emitter.context_id,
                    artifact=Artifact(
                        artifact_id=uuid.uuid4().hex, name=ARTIFACT_NAME, parts=parts
                    ),
                    last_chunk=True,
                )
            )
            await emitter.status(
                ContractState(status=Status.COMPLETED), text=outcome.text, task_meta=task_meta
            )
            return
        if isinstance(outcome, NeedsInput):
            if outcome.reason not in self.contract.waiting_reasons:
                raise AccordError(
                    ErrorCode.CONTRACT_VIOLATION,
                    f"agent {self.contract.name} does not declare waiting reason "
                    f"{outcome.reason.value!r}",
                )
            await emitter.status(
                ContractState(status=Status.WAITING, waiting_reason=outcome.reason),
                text=outcome.question,
                data=outcome.data,
                task_meta=task_meta,
            )
            return
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, "run() returned neither result type")


def check_on_behalf(principal: Principal, envelope: DelegationEnvelope) -> None:
    """Only a service may name a tenant user (or app) other than its own credential's."""
    tenant = envelope.tenant
    if principal.is_service:
        return
    if tenant.user != principal.subject or tenant.app != principal.app:
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            "only a service may act on behalf of another user",
            {"field": "envelope.tenant", "requirement": "ENV-004"},
        )


def turn_deadline_s() -> float:
    """Deadline of one turn of an end user's request that brought no envelope
    (``ACCORD_TURN_DEADLINE_S``, default five minutes)."""
    return current().turn_deadline_s


def default_envelope(principal: Principal, session: str, goal: str) -> DelegationEnvelope:
    """The envelope an end user's request gets when it brings none: its own tenant, a sane
    budget (100 units, 50 tool calls, five minutes)."""
    deadline = datetime.now(UTC) + timedelta(seconds=turn_deadline_s())
    values: dict[str, Any] = {
        "goal": goal[:2000] or "request",
        "budget": Budget(
            units=DEFAULT_BUDGET_UNITS, tool_calls=DEFAULT_BUDGET_TOOL_CALLS, deadline=deadline
        ),
        "tenant": {"app": principal.app, "user": principal.subject, "session": session},
    }
    try:
        return DelegationEnvelope.model_validate(values)
    except ValueError:
        # A subject outside the identifier pattern (an API key's) still gets a budget.
        tenant = Tenant.model_construct(app=principal.app, user=principal.subject, session=session)
        return DelegationEnvelope.model_construct(
            goal=values["goal"],
            constraints={},
            budget=values["budget"],
            context_refs=[],
            tenant=tenant,
            parent_task=None,
            traceparent=None,
        )


def _validate(validator: Draft202012Validator, value: Any, code: ErrorCode, what: str) -> None:
    error: ValidationError | None = next(iter(validator.iter_errors(value)), None)
    if error is None:
        return
    path = "/".join(str(p) for p in error.absolute_path) or "(root)"
    raise AccordError(
        code,
        f"{what} at {path!r} breaks the skill schema: {error.validator} {error.validator_value!r}"
        if error.validator not in ("additionalProperties", "required")
        else f"{what} at {path!r}: {error.message}",
        {"field": path, "rule": str(error.validator)},
    )
