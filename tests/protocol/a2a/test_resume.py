"""Resumable subscriptions from the store (accord.protocol.a2a.server.resume).

A task derived from a shared log names its events by their message ids on every read; a
subscription with ``Last-Event-ID`` gives every event after that one, in order, once; one
without it follows from the snapshot, through a waiting status, to the task's end; a terminal
task is refused without it (A2A 1.0) and replayed with it.
"""

from __future__ import annotations

import pytest
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import UnsupportedOperationError

from accord.protocol.a2a.server import resume
from accord.protocol.a2a.server.resume import subscribe_from_store

pytestmark = pytest.mark.timeout(30)


def _note(task_id: str, seq: int) -> Message:
    return Message(
        message_id=f"{task_id}-{seq}",
        role=Role.ROLE_AGENT,
        task_id=task_id,
        parts=[Part(text=f"step {seq}")],
    )


def _task(notes: int, state: TaskState = TaskState.TASK_STATE_WORKING) -> Task:
    """A task after ``notes`` progress notes: the last is its status while it works."""
    task = Task(id="t", context_id="c")
    task.history.append(Message(message_id="user-1", role=Role.ROLE_USER, parts=[Part(text="hi")]))
    messages = [_note("t", seq) for seq in range(1, notes + 1)]
    if state == TaskState.TASK_STATE_WORKING:
        task.history.extend(messages[:-1])
        task.status.CopyFrom(TaskStatus(state=state, message=messages[-1]))
        return task
    task.history.extend(messages)
    task.status.CopyFrom(TaskStatus(state=state, message=_note("t", notes + 1)))
    task.artifacts.append(Artifact(artifact_id="t-result", name="result", parts=[Part(text="ok")]))
    return task


def _context(last: str | None) -> ServerCallContext:
    context = ServerCallContext()
    context.state["headers"] = {"Last-Event-ID": last} if last else {}
    return context


def _ids(events: list[Event]) -> list[str]:
    out: list[str] = []
    for event in events:
        if isinstance(event, TaskStatusUpdateEvent):
            out.append(event.status.message.message_id)
        elif isinstance(event, TaskArtifactUpdateEvent):
            out.append(f"artifact {event.artifact.artifact_id}")
        else:
            out.append("snapshot")
    return out


async def _run(reads: list[Task], last: str | None) -> list[Event]:
    versions = iter(reads)
    current = next(versions)

    async def read(_task_id: str, _context: ServerCallContext) -> Task:
        nonlocal current
        found, current = current, next(versions, current)
        return found

    return [e async for e in subscribe_from_store("t", _context(last), read)]


async def test_a_terminal_task_is_refused_without_a_resume_point() -> None:
    with pytest.raises(UnsupportedOperationError):
        await _run([_task(3, TaskState.TASK_STATE_COMPLETED)], None)


async def test_a_resume_gives_every_later_event_once_in_order_then_ends() -> None:
    events = await _run([_task(4, TaskState.TASK_STATE_COMPLETED)], "t-2")
    assert _ids(events) == ["snapshot", "t-3", "t-4", "artifact t-result", "t-5"]
    assert events[-1].status.state == TaskState.TASK_STATE_COMPLETED  # type: ignore[union-attr]
    assert events[1].status.state == TaskState.TASK_STATE_WORKING  # type: ignore[union-attr]


async def test_a_client_that_saw_no_event_gets_them_all() -> None:
    events = await _run([_task(2, TaskState.TASK_STATE_FAILED)], resume.NO_EVENT_SEEN)
    assert _ids(events) == ["snapshot", "t-1", "t-2", "artifact t-result", "t-3"]


async def test_a_running_task_is_followed_each_event_once_until_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(resume, "FOLLOW_PAUSE_S", (0.0, 0.0))
    reads = [_task(2), _task(2), _task(4), _task(4), _task(5, TaskState.TASK_STATE_COMPLETED)]
    events = await _run(reads, "t-1")
    assert _ids(events) == ["snapshot", "t-2", "t-3", "t-4", "t-5", "artifact t-result", "t-6"]


async def test_without_a_resume_point_only_what_comes_after_the_snapshot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A waiting status does not end the subscription: another request (an answer, an
    approver's decision) may resume the task, and the subscriber sees it to its end."""
    monkeypatch.setattr(resume, "FOLLOW_PAUSE_S", (0.0, 0.0))
    waiting = _task(4, TaskState.TASK_STATE_INPUT_REQUIRED)
    reads = [_task(3), waiting, waiting, _task(5, TaskState.TASK_STATE_COMPLETED)]
    events = await _run(reads, None)
    assert _ids(events) == ["snapshot", "t-4", "t-5", "artifact t-result", "t-6"]
    assert events[2].status.state == TaskState.TASK_STATE_INPUT_REQUIRED  # type: ignore[union-attr]
    assert events[-1].status.state == TaskState.TASK_STATE_COMPLETED  # type: ignore[union-attr]
