"""The orchestrator's A2A tasks, derived from its workflow log (the only truth of a task).

Every orchestrator task is a workflow with the task's id: a refund conversation ("refund"), an
approver's decision ("approval"), or a request refused at its first turn (recorded as a
workflow that failed at once). Its A2A view is computed from the log on every read:

- history: the customer's messages (the first, each later answer) and a progress line for
  every step (``conversation.describe``), the same lines the live request streamed;
- status: from the replayed workflow state: running, waiting (input or approval, with the
  question), completed (with the result artifact) or failed (with the contract error;
  canceled is failed with CANCELED);
- metadata: what a later turn needs (skill, units spent, a caller's envelope), derived too.

Message and artifact ids are derived from the log (task id and sequence number), so every read
of the same log gives the same task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from accord.agents.models.base import Language
from accord.agents.refund.approvals import APPROVAL_GRAPH, APPROVE_SKILL, approval_text
from accord.agents.refund.budget import TOOL_CALLS, UNITS
from accord.agents.refund.config import GRAPH_NAME
from accord.agents.refund.conversation import describe, final_result, waiting_answer
from accord.agents.refund.facts import RefusedInput
from accord.agents.refund.receipt_text import customer_language, receipt_text
from accord.agents.refund.reported_errors import told
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    CONTRACT_VERSION_META_KEY,
    RECEIPT_ARTIFACT_NAME,
    REMAINING_META_KEY,
    SKILL_TASK_META_KEY,
    SPENT_META_KEY,
    TOOL_CALLS_SPENT_META_KEY,
)
from accord.contracts.status import ContractState, Status
from accord.protocol.a2a.server.executor import ARTIFACT_NAME
from accord.protocol.a2a.server.task_view import (
    ServerTaskView,
    ViewArtifact,
    ViewMessage,
    ViewPage,
    ViewQuery,
)
from accord.runtime.workflow import EventType, LogEvent, Runtime, WorkflowSnapshot
from accord.runtime.workflow.event_facts import EventFacts

logger = logging.getLogger(__name__)

REQUEST_SKILL: Final = "refund.request"
CANCELED_TEXT: Final = "the task was canceled by its caller"
_READS_AT_ONCE: Final = 16


class WorkflowTaskSource:
    """A :class:`~accord.protocol.a2a.server.task_view.TaskSource` over the runtime's log."""

    def __init__(self, runtime: Runtime, contract_version: str) -> None:
        self.runtime = runtime
        # The orchestrator serves one contract version, so every task speaks it (a task's
        # metadata states it, as ContractExecutor's do: docs/contract-evolution.md).
        self.contract_version = contract_version

    async def get_view(self, task_id: str, scope: str) -> ServerTaskView | None:
        events = await self.runtime.log.read(task_id)
        if not events or _scope(events[0]) != scope:
            return None  # another owner's task does not exist for this caller
        return self.fold(events)

    async def has_task(self, task_id: str, scope: str) -> bool:
        record = await self.runtime.log.record(task_id)
        if record is None:
            return False
        if record.scope is not None:  # the owner given at creation, as the first event's
            return record.scope == scope
        return await self.get_view(task_id, scope) is not None

    async def list_views(self, scope: str, query: ViewQuery) -> ViewPage:
        records, total = await self.runtime.log.list_workflows(
            scope,
            context_id=query.context_id,
            status=query.status,
            updated_after=query.updated_after.timestamp() if query.updated_after else None,
            after=query.after,
            limit=query.limit,
        )
        gate = asyncio.Semaphore(_READS_AT_ONCE)

        async def read(workflow_id: str) -> list[LogEvent]:
            async with gate:
                return await self.runtime.log.read(workflow_id)

        logs = await asyncio.gather(*(read(r.workflow_id) for r in records))
        views = []
        for record, events in zip(records, logs, strict=True):
            if not events:
                continue
            try:
                views.append(self.fold(events, sort_key=record.updated_at))
            except Exception:  # one workflow we cannot read must not fail every listing
                logger.exception(
                    "workflow %s cannot be shown as a task, skipped", record.workflow_id
                )
        return ViewPage(views=views, total=total)

    async def cancel(self, task_id: str, scope: str) -> ServerTaskView | None:
        view = await self.get_view(task_id, scope)
        if view is None or view.is_terminal:
            return view
        try:
            await self.runtime.cancel(task_id, reason=CANCELED_TEXT)
        except AccordError as error:
            # Ended meanwhile (not cancelable): the log has its outcome; anything else is real.
            if error.code is not ErrorCode.TASK_NOT_CANCELABLE:
                raise
        return await self.get_view(task_id, scope)

    async def record_refused(self, view: ServerTaskView, scope: str) -> None:
        first = next((m for m in view.history if m.role == "user"), None)
        inp = RefusedInput(
            owner=scope,
            session=view.context_id,
            message_id=first.message_id if first else None,
            text=first.text if first else "",
            data=dict(first.data) if first and first.data is not None else None,
        )
        message = view.status_message
        error = message.error if message is not None else None
        if error is None:
            error = AccordError(view.state.error_code or ErrorCode.INTERNAL)
        await self.runtime.record_refused(
            GRAPH_NAME,
            view.task_id,
            inp.model_dump(mode="json"),
            error,
            scope=scope,
            context_id=view.context_id,
        )

    # -- the fold ---------------------------------------------------------------------------
    def fold(self, events: Sequence[LogEvent], *, sort_key: float | None = None) -> ServerTaskView:
        snapshot = self.runtime.replay(list(events))
        first = events[0]
        task_id = first.workflow_id
        inp: dict[str, Any] = first.data.get("input") or {}
        context_id = str(inp.get("session") or "")
        history: list[ViewMessage] = [_user_message(inp, f"{task_id}-0")]
        progress: ViewMessage | None = None
        answers = 0
        facts = EventFacts()  # the status messages carry the facts the live stream did
        for event in events:
            facts.seen(event)
            if event.type is EventType.RESUMED:
                value = event.data.get("value")
                if isinstance(value, dict) and "asked" in value:  # a customer's answer
                    answers += 1
                    history.append(_user_message(value, f"{task_id}-{event.seq}-answer"))
            text = describe(event)
            if text is None:
                continue
            if progress is not None:
                history.append(progress)
            progress = ViewMessage(
                message_id=f"{task_id}-{event.seq}",
                role="agent",
                text=text,
                data=facts.of(event),
                state=ContractState(status=Status.RUNNING),
                node=event.node,
            )
        language = customer_language(str(inp.get("text") or ""))
        state, status_message, artifacts = _status(snapshot, task_id, events[-1].seq, language)
        if status_message is None:
            status_message = progress
        elif progress is not None:
            history.append(progress)
        graph = str(first.data.get("graph") or "")
        metadata: dict[str, Any] = {
            SKILL_TASK_META_KEY: APPROVE_SKILL if graph == APPROVAL_GRAPH else REQUEST_SKILL,
            CONTRACT_VERSION_META_KEY: self.contract_version,
            **budget_metadata(inp, snapshot.spent, answers),
        }
        return ServerTaskView(
            task_id=task_id,
            context_id=context_id,
            state=state,
            updated_at=datetime.fromtimestamp(events[-1].at, UTC),
            status_message=status_message,
            history=history,
            artifacts=artifacts,
            metadata=metadata,
            sort_key=sort_key,
        )


def budget_metadata(inp: dict[str, Any], spent: dict[str, int], answers: int) -> dict[str, Any]:
    """What the request tree spent of its envelope, and what remains (budget.py), from the
    log. A workflow started before spending was recorded: one unit a turn, as it was."""
    # compat.WORKFLOW_UNCOUNTED_TOOL_CALLS
    units = spent.get(UNITS, 0) if UNITS in spent else 1 + answers
    calls = spent.get(TOOL_CALLS, 0)
    meta: dict[str, Any] = {SPENT_META_KEY: units, TOOL_CALLS_SPENT_META_KEY: calls}
    remaining: dict[str, int] = {}
    if isinstance(inp.get("units"), int):
        remaining["units"] = max(0, inp["units"] - units)
    if isinstance(inp.get("tool_calls"), int):
        remaining["tool_calls"] = max(0, inp["tool_calls"] - calls)
    if remaining:
        meta[REMAINING_META_KEY] = remaining
    return meta


def _scope(started: LogEvent) -> str | None:
    inp = started.data.get("input")
    owner = inp.get("owner") if isinstance(inp, dict) else None
    return str(owner) if owner is not None else None


def _user_message(body: dict[str, Any], fallback_id: str) -> ViewMessage:
    data = body.get("data")
    return ViewMessage(
        message_id=str(body.get("message_id") or fallback_id),
        role="user",
        text=str(body.get("text") or ""),
        data=data if isinstance(data, dict) else None,
    )


def _status(
    snapshot: WorkflowSnapshot, task_id: str, last_seq: int, language: Language
) -> tuple[ContractState, ViewMessage | None, list[ViewArtifact]]:
    message_id = f"{task_id}-{last_seq}"
    if snapshot.status is Status.COMPLETED:
        result = final_result(snapshot.result)
        text = (
            approval_text(result)
            if snapshot.graph == APPROVAL_GRAPH
            else str(result.get("explanation") or "")
        )
        state = ContractState(status=Status.COMPLETED)
        message = ViewMessage(message_id, "agent", text=text, state=state)
        artifacts = [ViewArtifact(f"{task_id}-result", ARTIFACT_NAME, data=result)]
        receipt = receipt_text(result, language)
        if receipt is not None:
            artifacts.append(
                ViewArtifact(f"{task_id}-receipt", RECEIPT_ARTIFACT_NAME, text=receipt)
            )
        return state, message, artifacts
    if snapshot.status is Status.FAILED:
        # Another service's words stay in the log; the customer reads ours (reported_errors.py).
        error = told(
            snapshot.error or AccordError(ErrorCode.INTERNAL, "the workflow failed"), language
        )
        if error.code is ErrorCode.CANCELED:
            error = AccordError(ErrorCode.CANCELED, CANCELED_TEXT)
        state = ContractState(status=Status.FAILED, error_code=error.code)
        return (
            state,
            ViewMessage(message_id, "agent", text=error.message, state=state, error=error),
            [],
        )
    if snapshot.status is Status.WAITING:
        pending = snapshot.interrupts[0]
        reason, question, data = waiting_answer(pending.reason, pending.payload)
        state = ContractState(status=Status.WAITING, waiting_reason=reason)
        message = ViewMessage(
            f"{task_id}-{pending.interrupt_id}",
            "agent",
            text=question,
            data=data,
            state=state,
            node=pending.node,
        )
        return state, message, []
    return ContractState(status=Status.RUNNING), None, []
