"""The orchestrator's A2A executor: one task is one workflow (workflow id = task id).

Skill refund.request, first message: start the refund workflow, stream every node start and
finish as a status update naming the node, and answer when it settles: completed -> the
result; waiting(input) -> the question; waiting(approval) -> "waiting for an approver";
failed -> the workflow's error. A later message in the same task answers the pending question
(while an approval is pending it just gets the same waiting answer again). What to do with a
message is decided by the refund conversation (conversation.py), shared with the in-process
Runner.

Skill refund.approve: an approver's decision, run as an "approval" workflow (approvals.py).

Nothing here writes a task: the task store derives every task from the workflow log
(task_views.py), so what this request streams and what any later read returns come from the
same events. Cancel cancels the workflow, whose cancel hooks cancel the child tasks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from accord.agents.models.base import Language
from accord.agents.permissions import refund_customer
from accord.agents.refund.approvals import (
    APPROVE_SKILL,
    approval_input,
    approval_text,
    decide_refund,
    refuse_before_task,
)
from accord.agents.refund.conversation import (
    Conversation,
    Finished,
    Step,
    describe,
    outcome,
)
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.money import MAX_REFUND_CONSTRAINT
from accord.agents.refund.reported_errors import told
from accord.contracts.agents import AgentContract, Skill
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.server.executor import (
    Completed,
    ContractExecutor,
    NeedsInput,
    Progress,
    Turn,
)
from accord.protocol.auth import Principal
from accord.refund_contracts.domain import is_customer_id
from accord.runtime.workflow import LogEvent, Runtime, WorkflowSnapshot
from accord.runtime.workflow.event_facts import EventFacts

logger = logging.getLogger(__name__)

CANCEL_REASON: Final = "canceled by the caller"


TaskCreated = Callable[[str], Awaitable[None]]


async def _created_at_once(_task_id: str) -> None:
    """No task store to wait for (a store that is not derived from the workflow log)."""


class OrchestratorExecutor(ContractExecutor):
    def __init__(
        self, contract: AgentContract, runtime: Runtime, created: TaskCreated = _created_at_once
    ) -> None:
        super().__init__(contract)
        self.runtime = runtime
        self.conversation = Conversation(runtime)
        self._created = created

    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        if not turn.is_continuation:
            # A new task's workflow starts once the request handler has created the task:
            # started first, the log would make the task exist already for the handler, which
            # then logs an ERROR for every request (DerivedTaskStore.created).
            await self._created(turn.task_id)
        if turn.skill.id == APPROVE_SKILL:
            return await self._approve(turn, progress)
        if not turn.is_continuation:
            return await self._drive(
                self.conversation.start(turn.task_id, self._input(turn)), progress
            )
        step = await self.conversation.next_step(
            turn.task_id,
            text=turn.text,
            data=turn.data,
            principal=turn.principal.subject,
            message_id=turn.message_id,
        )
        if step is None:  # an approval is pending (or it ended): the same answer again
            return _answer(await self.runtime.snapshot(turn.task_id))
        return await self._drive(step, progress)

    async def admit_task(
        self, skill: Skill, principal: Principal, data: dict[str, Any] | None
    ) -> None:
        """A refused approval is an error answer, never a failed task in the approver's list
        (issue #36): what can be told before its task exists is told then."""
        if skill.id == APPROVE_SKILL:
            await refuse_before_task(self.runtime, principal, data)

    async def on_cancel(self, task_id: str) -> None:
        try:
            await self.runtime.cancel(task_id, reason=CANCEL_REASON)
        except AccordError as error:
            # TASK_NOT_CANCELABLE: already ended; NOT_FOUND: refused before a workflow began.
            logger.info("task %s: workflow not canceled: %s", task_id, error.code.value)

    # -- internals --------------------------------------------------------------------------
    def _input(self, turn: Turn) -> WorkflowInput:
        principal = turn.principal
        envelope = self._effective_envelope(turn)
        # The customer is who the credential says, or the tenant a service acts for; any other
        # role is refused (the allow-list in accord.agents.permissions).
        app, customer = refund_customer(principal, envelope)
        if not is_customer_id(customer):
            raise AccordError(
                ErrorCode.PERMISSION_DENIED,
                "refunds are requested by a customer (subject C-<digits>)",
                {"field": "principal"},
            )
        data = turn.data or {}
        text = turn.text or str(data.get("text") or "")
        # The gate admitted only the constraints refund.request declares, typed (ENV-007).
        limit = envelope.constraints.get(MAX_REFUND_CONSTRAINT)
        return WorkflowInput(
            text=text,
            order_id=data.get("order_id"),
            customer_id=customer,
            owner=principal.owner,
            app=app,
            session=turn.context_id,
            units=envelope.budget.units,
            tool_calls=envelope.budget.tool_calls,
            deadline=envelope.budget.deadline.isoformat(),
            traceparent=envelope.traceparent,
            message_id=turn.message_id,
            data=turn.data,
            max_refund_cents=limit
            if isinstance(limit, int) and not isinstance(limit, bool)
            else None,
            context_refs=list(envelope.context_refs),
        )

    async def _approve(self, turn: Turn, progress: Progress) -> Completed:
        inp = approval_input(turn.principal, turn.context_id, turn.data, turn.message_id)
        result = await decide_refund(self.conversation, turn.task_id, inp)
        return Completed(data=result, text=approval_text(result))

    async def _drive(self, step: Step, progress: Progress) -> Completed | NeedsInput:
        events: asyncio.Queue[LogEvent | None] = asyncio.Queue()

        async def observe(event: LogEvent) -> None:
            events.put_nowait(event)

        pump = asyncio.create_task(_pump(events, progress))
        try:
            snapshot = await self.conversation.drive(step, observe)
        finally:
            events.put_nowait(None)
            await pump
        return _answer(snapshot)


def _answer(snapshot: WorkflowSnapshot) -> Completed | NeedsInput:
    try:
        settled = outcome(snapshot)
    except AccordError as error:
        # The task's read from the log says the same (task_views.py): another service's words
        # stay in the log.
        raise told(error, _language(snapshot)) from None
    if isinstance(settled, Finished):
        return Completed(data=settled.result, text=settled.text)
    return NeedsInput(question=settled.question, data=settled.data, reason=settled.reason)


def _language(snapshot: WorkflowSnapshot) -> Language:
    """The customer's language as intake read it (English before intake ran)."""
    intake = snapshot.outputs.get("intake")
    found = intake.get("language") if isinstance(intake, dict) else None
    return Language(found) if found in (Language.EN.value, Language.ZH.value) else Language.EN


async def _pump(events: asyncio.Queue[LogEvent | None], progress: Progress) -> None:
    """Workflow events -> status updates naming the node, with the event's facts from the log
    (event_facts.py; task_views.py reads the same back). A failed update is not fatal."""
    facts = EventFacts()
    while (event := await events.get()) is not None:
        facts.seen(event)
        text = describe(event)
        if text is None:
            continue
        try:
            # The note's id is the one the task's history gives it (task_views.py): the log's
            # sequence number, on every replica, for a client that resumes its stream; its
            # facts (event, node, log time) are the same as read back too.
            await progress.update(
                text,
                node=event.node,
                data=facts.of(event),
                event_id=f"{event.workflow_id}-{event.seq}",
            )
        except Exception:
            logger.debug("progress update dropped", exc_info=True)
