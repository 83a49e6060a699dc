"""DerivedTaskStore: an a2a-sdk TaskStore whose tasks are views of another record.

An agent whose work is a durable workflow already records everything a task is (what the user
asked, every step, every answer, the outcome) in its workflow log. Keeping a second copy in a
task table would give every task two truths kept in step by a projector. Instead this store
asks the agent's :class:`~accord.protocol.a2a.server.task_view.TaskSource` for each read, and turns
the SDK's writes into what they mean for that record:

* a task moving to CANCELED (the SDK's cancel of a task not live in this process, or the final
  write of a live cancel) cancels the work in the record; the store then copies the record's
  canceled status, with its contract metadata, back into the task it was handed, so the
  caller's answer and every later read agree;
* a task that ends before any work began (refused at its first turn: bad input, no
  permission, no budget) is recorded by the source, so it can still be read and listed;
* every other write is the SDK's in-memory copy of progress the record already holds: it is
  not stored twice.

One order matters within a task's first turn: the SDK creates a new task (its first write, the
task ``submitted``) only if reading it finds nothing. A record started before the SDK got there
makes the task exist already, and the SDK logs an ERROR ("Task ... already exists") on every
request. :meth:`DerivedTaskStore.created` lets the agent start its record only once the SDK has
created the task.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks.task_store import TaskStore
from a2a.types import (
    Artifact,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WITH_ERROR, from_a2a
from accord.protocol.a2a.server.task_view import (
    ServerTaskView,
    TaskPresence,
    TaskSource,
    ViewArtifact,
    ViewMessage,
    ViewQuery,
)
from accord.protocol.a2a.server.turn import read_parts
from accord.protocol.a2a.wire import (
    a2a_task_state,
    data_part,
    error_data,
    read_contract_state,
    renderable,
    status_metadata,
)

logger = logging.getLogger(__name__)

CREATE_WAIT_S: Final = 5.0
"""How long an agent waits for the SDK to create its new task (it takes microseconds: the SDK
handles the task's first event as soon as the agent's turn yields)."""
MAX_PENDING_CREATIONS: Final = 4096

_TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_CANCELED,
    }
)


class DerivedTaskStore(TaskStore):
    """See the module docstring. ``owner_resolver`` gives the caller's scope, as in every
    Accord task store (tenant isolation: another scope's task is not found)."""

    def __init__(
        self, source: TaskSource, *, owner_resolver: OwnerResolver = resolve_user_scope
    ) -> None:
        self.source = source
        self._owner = owner_resolver
        self._presence = source if isinstance(source, TaskPresence) else None
        # task id -> set once the SDK created it; an entry lives from the first of the SDK's
        # create and the agent's wait to the other (bounded: a turn refused before it waited).
        self._creations: OrderedDict[str, asyncio.Event] = OrderedDict()

    async def created(self, task_id: str, timeout_s: float = CREATE_WAIT_S) -> None:
        """Return once the SDK has created the new task ``task_id`` (at once if it has)."""
        event = self._creation(task_id)
        try:
            await asyncio.wait_for(event.wait(), timeout_s)
        except TimeoutError:
            logger.warning(
                "task %s: not created by the request handler in %.0f s", task_id, timeout_s
            )
        finally:
            self._creations.pop(task_id, None)

    def _creation(self, task_id: str) -> asyncio.Event:
        event = self._creations.get(task_id)
        if event is None:
            event = self._creations[task_id] = asyncio.Event()
            while len(self._creations) > MAX_PENDING_CREATIONS:
                self._creations.popitem(last=False)
        return event

    async def save(self, task: Task, context: ServerCallContext) -> None:
        if task.status.state == TaskState.TASK_STATE_SUBMITTED:
            self._creation(task.id).set()  # the SDK's create: nothing of ours to write
            return
        scope = self._owner(context)
        if task.status.state == TaskState.TASK_STATE_CANCELED:
            view = await self.source.cancel(task.id, scope)
            if view is not None:
                # The SDK answers the caller with the object it handed us: make it the record's.
                task.CopyFrom(task_of(view))
            return
        if task.status.state not in _TERMINAL:
            return
        if not await self._has(task.id, scope):
            await self.source.record_refused(view_of(task), scope)

    async def has(self, owner: str, task_id: str) -> bool:
        """Whether ``owner`` has the task (the send keys live as long as their task)."""
        return await self._has(task_id, owner)

    async def _has(self, task_id: str, scope: str) -> bool:
        # Every finished task passes here: a source that can say whether it has one (one row)
        # is asked that, not for the view (its whole log folded: 2% of a workflow agent's CPU: #16).
        if self._presence is not None:
            return await self._presence.has_task(task_id, scope)
        return await self.source.get_view(task_id, scope) is not None

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        view = await self.source.get_view(task_id, self._owner(context))
        return task_of(view) if view is not None else None

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Nothing to do: the record is append-only and owns the task's lifetime."""
        del task_id, context

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        page_size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        after = decode_page_token(params.page_token) if params.page_token else None
        wanted = int(params.status)
        status = from_a2a(TaskState.Name(wanted)).status if wanted else None
        query = ViewQuery(
            context_id=params.context_id or None,
            status=status,
            updated_after=(
                params.status_timestamp_after.ToDatetime(tzinfo=UTC)
                if params.HasField("status_timestamp_after")
                else None
            ),
            after=after,
            limit=page_size + 1,
        )
        page = await self.source.list_views(self._owner(context), query)
        views = list(page.views)
        tasks = []
        for view in views[:page_size]:
            try:
                task = task_of(view)
            except Exception:  # one broken workflow must not fail every listing of its owner
                logger.exception("task %s cannot be rendered, skipped", view.task_id)
                continue
            if renderable(task):
                tasks.append(task)
            else:
                logger.error("task %s cannot be rendered, skipped", view.task_id)
        if wanted:
            # Several A2A states share a contract status (failed: FAILED, REJECTED, CANCELED).
            tasks = [t for t in tasks if t.status.state == wanted]
        next_token = ""
        if len(views) > page_size:
            next_token = encode_page_token(views[page_size - 1].order)
        return ListTasksResponse(
            next_page_token=next_token, tasks=tasks, total_size=page.total, page_size=page_size
        )


# -- view <-> task --------------------------------------------------------------------------


def task_of(view: ServerTaskView) -> Task:
    """The A2A task of a view."""
    status = TaskStatus(state=a2a_task_state(view.state))
    current = view.status_message
    shown = _message(current, view) if current is not None else None
    if shown is not None:
        status.message.CopyFrom(shown)
    status.timestamp.FromDatetime(view.updated_at)
    history = (_message(m, view) for m in view.history)
    task = Task(
        id=view.task_id,
        context_id=view.context_id,
        status=status,
        history=[m for m in history if m is not None],
        artifacts=[
            Artifact(artifact_id=a.artifact_id, name=a.name, parts=_artifact_parts(a))
            for a in view.artifacts
        ],
    )
    if view.metadata:
        task.metadata.update(dict(view.metadata))
    # The current contract status, where an Accord agent's task always carries it (wire.py).
    error = current.error if current is not None else None
    if view.state.status in WITH_ERROR and error is None:
        error = AccordError(view.state.error_code or ErrorCode.INTERNAL)
    node = current.node if current is not None else None
    task.metadata.update(status_metadata(view.state, error=error, node=node))
    return task


def view_of(task: Task) -> ServerTaskView:
    """A view of an SDK task (a task refused before any work began)."""
    state, error = read_contract_state(task.status, task.metadata)
    status_message = _view_message(task.status.message) if task.status.HasField("message") else None
    if status_message is not None and error is not None:
        status_message = ViewMessage(
            message_id=status_message.message_id,
            role="agent",
            text=status_message.text,
            state=state,
            error=error,
        )
    updated = (
        task.status.timestamp.ToDatetime(tzinfo=UTC)
        if task.status.HasField("timestamp")
        else datetime.now(UTC)
    )
    return ServerTaskView(
        task_id=task.id,
        context_id=task.context_id,
        state=state,
        updated_at=updated,
        status_message=status_message,
        history=[_view_message(m) for m in task.history],
    )


def _message(message: ViewMessage, view: ServerTaskView) -> Message | None:
    """The A2A message of a view's message; None for one without a part (A2A 1.0 requires
    one: a bare status change is the task's state and metadata, not a message)."""
    parts: list[Part] = []
    if message.text:
        parts.append(Part(text=message.text))
    if message.data is not None:
        parts.append(data_part(message.data))
    if message.error is not None:
        parts.append(data_part(error_data(message.error)))
    if not parts:
        return None
    out = Message(
        message_id=message.message_id,
        role=Role.ROLE_USER if message.role == "user" else Role.ROLE_AGENT,
        task_id=view.task_id,
        context_id=view.context_id,
        parts=parts,
    )
    if message.state is not None:
        out.metadata.update(status_metadata(message.state, error=message.error, node=message.node))
    return out


def _view_message(message: Message) -> ViewMessage:
    try:
        text, data = read_parts(message)
    except AccordError:  # a DataPart that is not an object: keep the text
        text, data = read_parts(Message(parts=[p for p in message.parts if p.HasField("text")]))
    return ViewMessage(
        message_id=message.message_id,
        role="user" if message.role == Role.ROLE_USER else "agent",
        text=text,
        data=data,
    )


def encode_page_token(order: tuple[float, str]) -> str:
    """An opaque token for the page after ``order``: the exact float (repr round-trips), so
    tasks that share a commit time are neither repeated nor skipped."""
    raw = json.dumps([order[0], order[1]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_page_token(token: str) -> tuple[float, str]:
    try:
        at, task_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        if isinstance(at, int | float) and isinstance(task_id, str) and math.isfinite(at):
            return float(at), task_id
    except (ValueError, TypeError):
        pass
    raise InvalidParamsError("Invalid page token (not one this agent issued)")  # not echoed


def _artifact_parts(artifact: ViewArtifact) -> list[Part]:
    parts: list[Part] = []
    if artifact.data is not None:
        parts.append(data_part(artifact.data))
    if artifact.text is not None:
        parts.append(Part(text=artifact.text, media_type=artifact.media_type))
    return parts
