"""Resumable subscriptions: ``SubscribeToTask`` on any replica, from the last event a client saw.

a2a-sdk serves ``SubscribeToTask`` from the process's live event queue: on a replica that is
not running the task (behind a load balancer, after the replica that streamed it died) the
snapshot is followed by ``TaskNotFoundError``, and nothing says which events the client missed.

An agent whose task store derives every task from a shared log (``DerivedTaskStore``: a
durable agent's tasks as views of its workflow log) names each event the same way on every
read: a status message's id is the log's sequence number (``<task>-<seq>``), in the live stream
and in the task's history alike. Such an agent serves a subscription from its store, on
whichever replica gets it:

1. the task, first (the A2A spec's snapshot);
2. with ``Last-Event-ID: <message id>`` (the id of the last status message the client saw, as
   in Server-Sent Events), every later event of the task's history, in order: a WORKING status
   update per progress note, then the current status (the result artifacts before a final
   one); an id the task does not have (``0``: the client saw none) gives every event;
3. every new event as the store shows it (read again after a short pause, as a replica follows
   a workflow another one runs), until the task ends (a terminal state): a task waiting for
   input or an approver is followed too, since another request (an answer, an approver's
   decision) may resume it; the client stops reading when the task stops for it, and an idle
   stream is ended by the gate after ``ACCORD_STREAM_IDLE_S``, as the SDK's own streams.

Each event is given once per subscription (by message id). A terminal task is refused as the
spec says (``UnsupportedOperationError``) unless the client resumes (``Last-Event-ID``): then
it gets the snapshot, the events it missed and the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.types import (
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import TaskNotFoundError, UnsupportedOperationError

RESUME_HEADER: Final = "last-event-id"
NO_EVENT_SEEN: Final = "0"  # a Last-Event-ID no task has: the client saw no event (all again)
FOLLOW_PAUSE_S: Final = (0.1, 0.5)  # first and longest pause between two reads of the task
TERMINAL: Final = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)

ReadTask = Callable[[str, ServerCallContext], Awaitable[Task | None]]


def last_event_id(context: ServerCallContext) -> str | None:
    """The client's ``Last-Event-ID`` header (the SDK keeps the request's headers)."""
    headers = context.state.get("headers")
    if not isinstance(headers, dict):
        return None
    for name, value in headers.items():
        if str(name).lower() == RESUME_HEADER and str(value).strip():
            return str(value).strip()
    return None


def task_events(task: Task) -> list[tuple[str, Event]]:
    """The task's events as (id, event), in order: a WORKING update per agent note of its
    history, then its current status (after its artifacts when it is terminal)."""
    out: list[tuple[str, Event]] = []
    for message in task.history:
        if message.role != Role.ROLE_AGENT or not message.message_id:
            continue
        status = TaskStatus(state=TaskState.TASK_STATE_WORKING, message=message)
        out.append((message.message_id, _status_event(task, status)))
    status_id = task.status.message.message_id or f"{task.id}-{TaskState.Name(task.status.state)}"
    if task.status.state in TERMINAL:
        for artifact in task.artifacts:
            event = TaskArtifactUpdateEvent(
                task_id=task.id, context_id=task.context_id, artifact=artifact, last_chunk=True
            )
            out.append((f"{status_id}/{artifact.artifact_id}", event))
    if task.status.message.message_id not in {i for i, _ in out}:
        out.append((status_id, _status_event(task, task.status)))
    return out


def _status_event(task: Task, status: TaskStatus) -> TaskStatusUpdateEvent:
    event = TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id)
    event.status.CopyFrom(status)
    event.metadata.update(dict(status.message.metadata))  # the contract state, as live
    return event


async def subscribe_from_store(
    task_id: str, context: ServerCallContext, read: ReadTask
) -> AsyncIterator[Event]:
    """See the module docstring; ``read`` reads the task from the store (owner-scoped)."""
    after = last_event_id(context)
    task = await read(task_id, context)
    if task is None:
        raise TaskNotFoundError
    if task.status.state in TERMINAL and after is None:
        raise UnsupportedOperationError(
            message=f"Task {task.id} is in terminal state: {TaskState.Name(task.status.state)}"
        )
    yield task
    events = task_events(task)
    ids = [i for i, _ in events]
    # Without the header the snapshot carries all of it already; with it, what came after
    # the client's last event is given again (all of it for an id the task does not have:
    # the client saw none, ``Last-Event-ID: 0``).
    seen = set(ids) if after is None else set(ids[: ids.index(after) + 1] if after in ids else ())
    pause = FOLLOW_PAUSE_S[0]
    while True:
        fresh = [(i, e) for i, e in events if i not in seen]
        for event_id, event in fresh:
            seen.add(event_id)
            yield event
        if task.status.state in TERMINAL:
            return
        pause = FOLLOW_PAUSE_S[0] if fresh else min(pause * 2, FOLLOW_PAUSE_S[1])
        await asyncio.sleep(pause)  # the task changes on another replica: read it again
        latest = await read(task_id, context)
        if latest is None:
            return
        task, events = latest, task_events(latest)
