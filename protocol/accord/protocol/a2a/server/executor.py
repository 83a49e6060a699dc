"""ContractExecutor: an a2a-sdk AgentExecutor that keeps the Accord contract for an agent.

Subclasses implement :meth:`ContractExecutor.run` and return :class:`Completed` (its data
artifact ``result``, when it has data, and any further artifacts), :class:`NeedsInput`,
:class:`Rejected` (the agent declines: A2A REJECTED), or :class:`Reply` (one agent Message, no
task) for a skill whose contract says ``reply: message`` or, in an executor with
:attr:`ContractExecutor.may_reply`, on any first turn that opened no task yet; a failure is an
:class:`AccordError` raised. While it runs, ``progress`` reports steps and streams artifacts in
chunks. The turn around it is done here, once, by parts that each hold one concern:

* :mod:`~accord.protocol.a2a.server.turn` reads the turn: the principal and the envelope the gate
  verified, the skill, the input (validated against the skill's input schema), the agent's
  per-task scratch (``Turn.state``, persisted in the task's metadata);
* :mod:`~accord.protocol.a2a.budget_guard` refuses a turn the envelope's budget or deadline
  leaves no room for, and the deadline bounds ``run()``;
* :mod:`~accord.protocol.a2a.server.status_emitter` emits every status as a checked contract
  transition with the contract metadata, on the SDK's ``TaskUpdater``;
* here: the answer is checked against the output schema, the waiting reasons the contract
  declares and the codes a decline may carry, and reported as artifacts and the final status
  (or as the reply message).

An agent may serve several major versions of its contract side by side
(:class:`~accord.contracts.served.ServedContracts`): each task speaks the version its first
turn named (``dev.accord/contractVersion``, kept in the task's metadata for later turns), its
input is read and its answer given in that version (:func:`~accord.contracts.served.answer_in`).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, ClassVar, Final

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace

from accord.contracts.agents import AgentContract, ReplyKind, Skill
from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    CONTRACT_VERSION_META_KEY,
    ENVELOPE_META_KEY,
    SKILL_TASK_META_KEY,
    SPENT_META_KEY,
    STATE_META_KEY,
    TOOL_CALLS_SPENT_META_KEY,
)
from accord.contracts.served import ServedContracts, answer_in
from accord.contracts.status import REJECTABLE, TERMINAL, ContractState, Status, from_a2a
from accord.contracts.versions import major
from accord.protocol.a2a.budget_guard import BudgetGuard
from accord.protocol.a2a.server.delegation import check_on_behalf, default_envelope
from accord.protocol.a2a.server.skill_schemas import SkillSchemas
from accord.protocol.a2a.server.status_emitter import (
    RESULT_ARTIFACT,
    ArtifactStream,
    ContractTaskUpdater,
    Progress,
)
from accord.protocol.a2a.server.turn import (
    ENVELOPE_STATE_KEY,
    PRINCIPAL_STATE_KEY,
    Completed,
    NeedsInput,
    Rejected,
    Reply,
    Turn,
    asked_contract_version,
    asked_skill,
    read_turn,
)
from accord.protocol.a2a.wire import data_part, plain
from accord.protocol.auth import Principal
from accord.protocol.telemetry import bind_task, spans
from accord.protocol.telemetry import span as telemetry_span

__all__ = [
    "ARTIFACT_NAME",
    "ENVELOPE_STATE_KEY",
    "PRINCIPAL_STATE_KEY",
    "ArtifactStream",
    "Completed",
    "ContractExecutor",
    "NeedsInput",
    "Progress",
    "Rejected",
    "Reply",
    "Turn",
    "check_on_behalf",
    "default_envelope",
]

logger = logging.getLogger(__name__)

ARTIFACT_NAME: Final = RESULT_ARTIFACT

TurnResult = Completed | NeedsInput | Rejected | Reply


class ContractExecutor(AgentExecutor):
    """Base class of every Accord agent's executor; see the module docstring."""

    may_reply: ClassVar[bool] = False
    """True: ``run()`` decides per turn how it answers, and may return :class:`Reply` on a first
    turn whatever the skill's ``reply`` says. The new task then opens only when the turn needs
    it: at its first progress update or streamed chunk, or when ``run()`` returns a task outcome
    (or fails). False (the default): the task opens before ``run()``, so a non-blocking or
    streaming client holds its id at once and can cancel it while ``run()`` works, which an
    agent that may still answer with a message cannot offer."""

    def __init__(
        self,
        contract: AgentContract,
        *,
        units_per_turn: int = 1,
        tool_calls_per_turn: int = 0,
        served: ServedContracts | None = None,
    ) -> None:
        """``served``: the versions served side by side (default: ``contract`` alone), whose
        primary is ``contract``."""
        self.served = served or ServedContracts.single(contract)
        if self.served.primary != contract:
            raise ValueError("the executor's contract must be the newest one it serves")
        self.contract = contract
        self.budget = BudgetGuard(units_per_turn, tool_calls_per_turn)
        self._schemas = {
            number: SkillSchemas(version) for number, version in self.served.by_major.items()
        }

    # -- to implement -----------------------------------------------------------------------
    async def run(self, turn: Turn, progress: Progress) -> TurnResult:
        raise NotImplementedError

    async def on_cancel(self, task_id: str) -> None:
        """Optional hook: release what the task holds (children, locks). Default: nothing.

        Called for a task live in this process (running, or waiting for less than
        ``IDLE_RELEASE_S``); a waiting task is canceled by its store's write (app.py)."""

    async def admit_task(
        self, skill: Skill, principal: Principal, data: dict[str, Any] | None
    ) -> None:
        """Optional hook: refuse a new task's first message before any task exists, with an
        :class:`AccordError` (the caller's answer; nothing is stored, nothing is listed).
        Called by the gate after the skill's ``access`` and ``envelope`` admitted it, once per
        message key (a message sent again gets its first answer back). For refusals that
        need the agent's own state (a decision on another task that is not waiting); checks
        of the message's shape belong to the skill's schema. Default: admits."""

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

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = str(context.task_id)
        try:
            await self.on_cancel(task_id)
        except Exception:  # the task is canceled either way; the hook's fault is logged
            logger.exception("on_cancel hook failed for task %s", task_id)
        if task is None:
            return
        current = from_a2a(TaskState.Name(task.status.state)).status
        updater = ContractTaskUpdater(
            event_queue, task_id, task.context_id, current, agent=self.contract.name
        )
        await updater.fail(AccordError(ErrorCode.CANCELED, "the task was canceled by its caller"))

    # -- internals --------------------------------------------------------------------------
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
            task: Task | None = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[message] if message is not None else [],
            )
            status = Status.QUEUED
        else:
            task, status = None, from_a2a(TaskState.Name(current.status.state)).status
        # A first turn that may be answered with a message (the skill always replies so, or the
        # executor decides per turn) opens no task unless its turn ends otherwise (refused,
        # failed, declined, it reported progress, or it chose to answer with a task after all).
        skill = asked_skill(context, self.contract) if current is None else None
        replies = skill is not None and skill.reply is ReplyKind.MESSAGE
        deferred = current is None and (replies or self.may_reply)
        opened = _Opening(event_queue, task)
        if not deferred:
            await opened.task()
        updater = ContractTaskUpdater(
            event_queue, task_id, context_id, status, agent=self.contract.name, span=active
        )
        try:
            speaking = self.served.speaking(asked_contract_version(context))
            schemas = self._schemas[major(speaking.version)]
            turn = read_turn(context, speaking, schemas, context_id=context_id)
            envelope = self._effective_envelope(turn)
            allowance = self.budget.admit(
                envelope, turn.spent_units, tool_calls_spent=turn.spent_tool_calls
            )
        except AccordError as error:
            await opened.task()
            await updater.fail(error)
            return

        task_meta: dict[str, Any] = {
            SPENT_META_KEY: allowance.spent,
            TOOL_CALLS_SPENT_META_KEY: allowance.tool_calls_spent,
            SKILL_TASK_META_KEY: turn.skill.id,
            CONTRACT_VERSION_META_KEY: speaking.version,
        }
        if turn.envelope is not None:
            # A caller's envelope binds every later turn (its deadline is the caller's). A
            # synthesised one is not kept: an end user who answers a question tomorrow gets a
            # fresh per-turn deadline, while the units spent keep counting against the budget.
            task_meta[ENVELOPE_META_KEY] = envelope.model_dump(mode="json", exclude_none=True)

        started = False

        async def running() -> None:  # once: the task's RUNNING status, with its metadata
            nonlocal started
            if not started:
                started = True
                await opened.task()
                await updater.status(ContractState(status=Status.RUNNING), task_meta=task_meta)

        if not deferred:
            await running()
        try:
            async with asyncio.timeout(allowance.remaining_s):
                outcome = await self.run(turn, Progress(None if replies else updater, running))
            if deferred and not started and isinstance(outcome, Reply):
                await event_queue.enqueue_event(self._reply_message(outcome, turn, schemas))
                return
            opened_by_progress = started
            await running()
            await self._report(outcome, turn, updater, schemas, opened_by_progress)
        except TimeoutError:
            await running()
            await updater.fail(self.budget.overrun(envelope))
        except AccordError as error:
            await running()
            if updater.current not in TERMINAL:
                await updater.fail(error)
            else:
                logger.error("task %s: error after a terminal state: %r", turn.task_id, error)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("task %s: run() raised", turn.task_id)
            await running()
            await updater.fail(AccordError(ErrorCode.INTERNAL, "the agent failed unexpectedly"))

    def _reply_message(self, reply: Reply, turn: Turn, schemas: SkillSchemas) -> Message:
        """The agent Message of a Reply: its text, its data (checked), its other parts."""
        parts: list[Part] = []
        if reply.text:
            parts.append(Part(text=reply.text))
        if reply.data is not None:
            parts.append(data_part(self._answer(turn, reply.data, schemas)))
        parts.extend(reply.parts)
        return Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_AGENT,
            context_id=turn.context_id,
            parts=parts,
        )

    def _no_reply(self, turn: Turn, opened_by_progress: bool) -> str:
        """Why this turn's Reply cannot be a message: it has a task already, or may not."""
        if turn.is_continuation:
            return "a turn of an existing task cannot be answered with a message"
        if opened_by_progress:
            return "the turn reported progress, which opened its task: it cannot become a message"
        return (
            f"skill {turn.skill.id} answers with a task; Reply needs 'reply: message' "
            "or an executor with may_reply"
        )

    def _effective_envelope(self, turn: Turn) -> DelegationEnvelope:
        """The caller's envelope, or the default one of an end user who brought none."""
        if turn.envelope is not None:
            return turn.envelope
        return default_envelope(turn.principal, turn.context_id, turn.text or turn.skill.name)

    def _answer(self, turn: Turn, data: dict[str, Any], schemas: SkillSchemas) -> dict[str, Any]:
        """The answer in the version the task speaks (turn.skill is that version's skill),
        checked against that version's output schema."""
        data = answer_in(turn.skill.output_schema, data)
        try:
            schemas.check_output(turn.skill, data)
        except AccordError as error:
            logger.error("task %s: output breaks the skill schema: %s", turn.task_id, error.message)
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                "the agent's answer broke its declared output schema",
                error.details,
            ) from None
        return data

    async def _report(
        self,
        outcome: TurnResult,
        turn: Turn,
        updater: ContractTaskUpdater,
        schemas: SkillSchemas,
        opened_by_progress: bool = False,
    ) -> None:
        task_meta = {STATE_META_KEY: turn.state}
        if isinstance(outcome, Completed):
            # No data is the empty answer: the output schema decides whether it may be empty.
            outcome.data = self._answer(turn, outcome.data or {}, schemas)
            if any(a.name == ARTIFACT_NAME for a in outcome.artifacts):
                raise AccordError(
                    ErrorCode.CONTRACT_VIOLATION,
                    f"the artifact name {ARTIFACT_NAME!r} is the result's own",
                )
            if outcome.data:
                # Structured data goes out as the DataPart artifact `result`; an answer of text
                # or files alone is not preceded by an empty one (a client reading the first
                # artifact would find `{}` instead of the answer; Accord's clients read
                # `result` by its name).
                await updater.add_artifact(
                    [data_part(outcome.data)], name=ARTIFACT_NAME, last_chunk=True
                )
            for extra in outcome.artifacts:
                await updater.add_artifact(
                    list(extra.parts),
                    artifact_id=extra.artifact_id or None,
                    name=extra.name or None,
                    metadata=plain(MessageToDict(extra.metadata)) or None,
                    last_chunk=True,
                )
            await updater.status(
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
            await updater.status(
                ContractState(status=Status.WAITING, waiting_reason=outcome.reason),
                text=outcome.question,
                data=outcome.data,
                task_meta=task_meta,
            )
            return
        if isinstance(outcome, Rejected):
            if outcome.code not in REJECTABLE:
                raise AccordError(
                    ErrorCode.CONTRACT_VIOLATION,
                    f"a decline cannot carry {outcome.code.value}: it is no decision about "
                    "the request (docs/contract.md, declines)",
                )
            declined = AccordError(outcome.code, outcome.reason, outcome.details)
            await updater.status(
                ContractState(status=Status.FAILED, error_code=outcome.code, declined=True),
                text=outcome.reason,
                error=declined,
                task_meta=task_meta,
            )
            return
        if isinstance(outcome, Reply):
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION, self._no_reply(turn, opened_by_progress)
            )
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, "run() returned no known outcome")


class _Opening:
    """The new task's first event, enqueued once and only when the turn needs a task."""

    def __init__(self, event_queue: EventQueue, task: Task | None) -> None:
        self._queue = event_queue
        self._task = task

    async def task(self) -> None:
        """Enqueue the task if it is new and not yet sent."""
        if self._task is not None:
            await self._queue.enqueue_event(self._task)
            self._task = None
