"""Out-of-band outcomes written into the customer's A2A task.

Most of the time the customer's own request is executing when its workflow settles, and the
executor reports the outcome through the SDK. Some changes happen with no request running: an
approver decides, an approval times out, a workflow recovered after a crash finishes or starts
waiting. The projector writes those into the task store directly, with the customer as owner,
so GetTask / ListTasks show the truth. It never writes while a request is executing that task
(the SDK's in-memory task manager would race it), and never over a terminal task.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime
from typing import Any, Final

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.types import Artifact, Task, TaskState, TaskStatus

from accord.agents.refund.facts import WorkflowInput
from accord.agents.workflow import Event, EventType, Runtime, WorkflowSnapshot
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import ContractState, Status, WaitingReason, from_a2a
from accord.protocol.a2a.executor import ARTIFACT_NAME
from accord.protocol.a2a.store import AccordTaskStore
from accord.protocol.a2a.wire import a2a_task_state, data_part, failed_status, status_message

logger = logging.getLogger(__name__)

APPROVAL_TEXT: Final = "waiting for an approver"
TRIGGERS: Final = frozenset({EventType.WORKFLOW_FINISHED, EventType.INTERRUPTED})
SETTLE_GRACE_S: Final = 0.05  # after a request ends, let the SDK save its last event first


class OwnerUser(User):
    """The owner scope a projection reads and writes the task under."""

    def __init__(self, owner: str) -> None:
        self._owner = owner

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._owner


def is_terminal(task: Task) -> bool:
    return from_a2a(TaskState.Name(task.status.state)).status in (Status.COMPLETED, Status.FAILED)


def final_result(snapshot: WorkflowSnapshot) -> dict[str, Any]:
    """The skill output: the output of the one end node that ran."""
    for value in snapshot.result.values():
        if isinstance(value, dict) and "decision" in value:
            return value
    raise AccordError(ErrorCode.INTERNAL, "the workflow finished without a result")


def waiting_answer(snapshot: WorkflowSnapshot) -> tuple[WaitingReason, str, dict[str, Any] | None]:
    """What a waiting workflow asks: (reason, question, data)."""
    pending = snapshot.interrupts[0]
    payload = pending.payload if isinstance(pending.payload, dict) else {}
    if pending.reason is WaitingReason.APPROVAL:
        return pending.reason, APPROVAL_TEXT, {"approval": payload}
    return pending.reason, str(payload.get("question") or "please answer"), None


class Projector:
    def __init__(self, store: AccordTaskStore, runtime: Runtime) -> None:
        self.store = store
        self.runtime = runtime
        self._live: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    # -- who is executing what ----------------------------------------------------------------
    def enter(self, task_id: str) -> None:
        self._live[task_id] = self._live.get(task_id, 0) + 1

    def leave(self, task_id: str) -> None:
        left = self._live.get(task_id, 1) - 1
        if left > 0:
            self._live[task_id] = left
            return
        self._live.pop(task_id, None)
        if task_id in self._dirty:
            self._dirty.discard(task_id)
            self.schedule(task_id, delay_s=SETTLE_GRACE_S)

    # -- triggers -----------------------------------------------------------------------------
    async def observe(self, event: Event) -> None:
        """Runtime observer: a workflow ended or asked something; project it unless a request
        is executing its task (that request reports it; if it already returned, we do)."""
        if event.type not in TRIGGERS:
            return
        self.schedule(event.workflow_id)

    def schedule(self, task_id: str, *, delay_s: float = 0.0) -> asyncio.Task[None] | None:
        """Project soon; the task doing it (None: a request is live, it is done after)."""
        if task_id in self._live:
            self._dirty.add(task_id)
            return None
        task = asyncio.create_task(self._project_later(task_id, delay_s))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _project_later(self, task_id: str, delay_s: float) -> None:
        try:
            if delay_s:
                await asyncio.sleep(delay_s)
            snapshot = await self.runtime.handle(task_id).settled()
            if task_id in self._live:
                self._dirty.add(task_id)
                return
            await self.project(task_id, snapshot)
        except AccordError as error:
            logger.warning("task %s: projection skipped: %s", task_id, error.code.value)
        except Exception:
            logger.exception("task %s: projection failed", task_id)

    # -- the write ------------------------------------------------------------------------------
    async def project(self, task_id: str, snapshot: WorkflowSnapshot) -> bool:
        """Write the workflow's state into the task; False when there was nothing to do."""
        if snapshot.status in (Status.RUNNING, Status.QUEUED):
            return False
        events = await self.runtime.log.read(task_id)
        if not events:
            return False
        inp = WorkflowInput.model_validate(events[0].data.get("input"))
        context = ServerCallContext(user=OwnerUser(inp.owner))
        task = await self.store.get(task_id, context)
        if task is None or is_terminal(task):
            return False
        status, artifact = self._status(task, snapshot)
        if task.status.state == status.state and task.status.message.parts == status.message.parts:
            return False
        if task.status.HasField("message"):
            task.history.append(task.status.message)
        task.status.CopyFrom(status)
        if artifact is not None:
            task.artifacts.append(artifact)
        await self.store.save(task, context)
        return True

    @staticmethod
    def _status(task: Task, snapshot: WorkflowSnapshot) -> tuple[TaskStatus, Artifact | None]:
        task_id, context_id = task.id, task.context_id
        artifact: Artifact | None = None
        if snapshot.status is Status.FAILED:
            error = snapshot.error or AccordError(ErrorCode.INTERNAL, "the workflow failed")
            status = failed_status(error, task_id=task_id, context_id=context_id)
        elif snapshot.status is Status.COMPLETED:
            result = final_result(snapshot)
            state = ContractState(status=Status.COMPLETED)
            message = status_message(
                state,
                task_id=task_id,
                context_id=context_id,
                text=str(result.get("explanation") or ""),
            )
            status = TaskStatus(state=a2a_task_state(state), message=message)
            artifact = Artifact(
                artifact_id=uuid.uuid4().hex, name=ARTIFACT_NAME, parts=[data_part(result)]
            )
        else:
            reason, question, data = waiting_answer(snapshot)
            state = ContractState(status=Status.WAITING, waiting_reason=reason)
            message = status_message(
                state, task_id=task_id, context_id=context_id, text=question, data=data
            )
            status = TaskStatus(state=a2a_task_state(state), message=message)
        status.timestamp.FromDatetime(datetime.now(UTC))
        return status, artifact
