"""The orchestrator's A2A executor: one customer task is one workflow (workflow id = task id).

First message (skill refund.request): start the workflow, stream every node start and finish
as a status update naming the node, and answer when the workflow settles: completed -> the
result; waiting(input) -> the question; waiting(approval) -> "waiting for an approver"; failed ->
the workflow's error. A later message in the same task answers the pending question (while an
approval is pending it just gets the same waiting answer again). Cancel cancels the workflow,
whose cancel hooks cancel the child tasks. Skill refund.approve is handled by approvals.py.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.utils.errors import UnsupportedOperationError

from accord.agents.refund.approvals import APPROVE_SKILL, Approvals
from accord.agents.refund.config import GRAPH_NAME
from accord.agents.refund.facts import WorkflowInput, answer_value
from accord.agents.refund.projection import (
    Projector,
    final_result,
    is_terminal,
    waiting_answer,
)
from accord.agents.workflow import Event, EventType, Runtime, WorkflowHandle, WorkflowSnapshot
from accord.contracts.agents import AgentContract
from accord.contracts.domain import is_customer_id
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.executor import Completed, ContractExecutor, NeedsInput, Progress, Turn

logger = logging.getLogger(__name__)

FOLLOW_POLL_S: Final = (0.05, 1.0)  # first and longest pause reading another replica's run
STARTED: Final = {
    "intake": "reading your request",
    "order": "looking up the order (orders.lookup)",
    "policy": "asking policy-check whether the refund is allowed",
    "risk": "asking risk-check how risky the refund is",
    "decide": "deciding",
    "approval": "the refund needs an approver",
    "refund": "issuing the refund (refunds.get, then refunds.issue)",
    "explain": "explaining the decision",
    "rejected": "explaining the approver's decision",
}


class OrchestratorExecutor(ContractExecutor):
    def __init__(
        self, contract: AgentContract, runtime: Runtime, projector: Projector, approvals: Approvals
    ) -> None:
        super().__init__(contract)
        self.runtime = runtime
        self.projector = projector
        self.approvals = approvals

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        current = context.current_task
        if current is not None and is_terminal(current):
            # Finished out of band (an approval, a timeout): its state stays as written.
            raise UnsupportedOperationError(message="the task has ended")
        task_id = str(context.task_id)
        self.projector.enter(task_id)
        try:
            await super().execute(context, event_queue)
        finally:
            self.projector.leave(task_id)

    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        if turn.skill.id == APPROVE_SKILL:
            return await self.approvals.decide(turn)
        if turn.is_continuation:
            return await self._continue(turn, progress)
        inp = self._input(turn)
        return await self._drive(turn.task_id, progress, start=inp)

    async def on_cancel(self, task_id: str) -> None:
        try:
            await self.runtime.cancel(task_id, reason="canceled by the caller")
        except AccordError as error:
            # NOT_FOUND: an approval task (no workflow); TASK_NOT_CANCELABLE: already ended.
            logger.info("task %s: workflow not canceled: %s", task_id, error.code.value)

    # -- internals --------------------------------------------------------------------------
    def _input(self, turn: Turn) -> WorkflowInput:
        principal = turn.principal
        envelope = self._effective_envelope(turn)
        # The customer is who the credential says (or the tenant a service acts for).
        customer = envelope.tenant.user if principal.is_service else principal.subject
        if not is_customer_id(customer):
            raise AccordError(
                ErrorCode.PERMISSION_DENIED,
                "refunds are requested by a customer (subject C-<digits>)",
                {"field": "principal"},
            )
        data = turn.data or {}
        text = turn.text or str(data.get("text") or "")
        return WorkflowInput(
            text=text,
            order_id=data.get("order_id"),
            customer_id=customer,
            owner=principal.owner,
            app=principal.app,
            session=turn.context_id,
            units=envelope.budget.units,
            deadline=envelope.budget.deadline.isoformat(),
            traceparent=envelope.traceparent,
        )

    async def _continue(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        snapshot = await self.runtime.snapshot(turn.task_id)
        if snapshot.status is Status.WAITING:
            asked = next((p for p in snapshot.interrupts if p.reason is WaitingReason.INPUT), None)
            if asked is None:
                return self._outcome(snapshot)  # an approval is pending: same answer again
            value = answer_value(turn.text, turn.data, asked.payload)
            return await self._drive(
                turn.task_id,
                progress,
                resume=(asked.interrupt_id, value, turn.principal.subject),
            )
        if snapshot.status is Status.RUNNING:
            return await self._drive(turn.task_id, progress)
        return self._outcome(snapshot)

    async def _drive(
        self,
        task_id: str,
        progress: Progress,
        *,
        start: WorkflowInput | None = None,
        resume: tuple[str, Any, str] | None = None,
    ) -> Completed | NeedsInput:
        events: asyncio.Queue[Event | None] = asyncio.Queue()

        async def observe(event: Event) -> None:
            events.put_nowait(event)

        unsubscribe = self.runtime.subscribe(observe, task_id)
        pump = asyncio.create_task(_pump(events, progress))
        try:
            handle: WorkflowHandle
            if start is not None:
                handle = await self.runtime.start(
                    GRAPH_NAME, workflow_id=task_id, input=start.model_dump(mode="json")
                )
            elif resume is not None:
                interrupt_id, value, principal = resume
                handle = await self.runtime.resume(task_id, interrupt_id, value, principal)
            else:
                handle = self.runtime.handle(task_id)
            snapshot = await handle.settled()
            pause_s = FOLLOW_POLL_S[0]
            while snapshot.status is Status.RUNNING:
                # It runs on another replica (or on none until a dead one's lease expires):
                # follow it in the shared log, and on this replica's runner once it takes over.
                # Failing the customer's task here would hide the outcome (docs/replicas.md).
                await asyncio.sleep(pause_s)
                pause_s = min(pause_s * 2, FOLLOW_POLL_S[1])
                snapshot = await self.runtime.handle(task_id).settled()
        finally:
            unsubscribe()
            events.put_nowait(None)
            await pump
        return self._outcome(snapshot)

    @staticmethod
    def _outcome(snapshot: WorkflowSnapshot) -> Completed | NeedsInput:
        if snapshot.status is Status.COMPLETED:
            result = final_result(snapshot)
            return Completed(data=result, text=str(result.get("explanation") or ""))
        if snapshot.status is Status.WAITING:
            reason, question, data = waiting_answer(snapshot)
            return NeedsInput(question=question, data=data, reason=reason)
        if snapshot.status is Status.FAILED:
            raise snapshot.error or AccordError(ErrorCode.INTERNAL, "the workflow failed")
        raise AccordError(
            ErrorCode.UNAVAILABLE,
            "the workflow is busy elsewhere; try again",
            {"workflow_id": snapshot.workflow_id},
        )


async def _pump(events: asyncio.Queue[Event | None], progress: Progress) -> None:
    """Workflow events -> status updates naming the node (a failed update is not fatal)."""
    while (event := await events.get()) is not None:
        text = _describe(event)
        if text is None:
            continue
        try:
            await progress.update(text, node=event.node)
        except Exception:
            logger.debug("progress update dropped", exc_info=True)


def _describe(event: Event) -> str | None:
    node = event.node or ""
    if event.type is EventType.NODE_STARTED:
        return f"{node}: {STARTED.get(node, 'started')}"
    if event.type is EventType.NODE_OUTPUT:
        label = event.data.get("label")
        route = f" -> {label}" if label else ""
        return f"{node}: done{_summary(node, event.data.get('output'))}{route}"
    if event.type is EventType.NODE_FAILED and not event.data.get("final"):
        code = (event.data.get("error") or {}).get("code")
        return f"{node}: {code}, retrying"
    if event.type is EventType.RESUMED:
        return f"{node}: answer received"
    return None


def _summary(node: str, output: Any) -> str:
    if not isinstance(output, dict):
        return ""
    if node == "intake":
        return f" (order {output.get('order_id')}, reason {output.get('reason')})"
    if node in ("order", "policy", "risk") and output.get("found") is False:
        return " (order not found)"
    if node == "policy":
        return f" (eligible: {output.get('eligible')}, rule {output.get('rule')})"
    if node == "risk":
        return f" (risk {output.get('risk')})"
    if node == "approval":
        return f" ({output.get('decision')} by {output.get('approver')})"
    if "decision" in output:
        return f" ({output['decision']})"
    return ""
