"""TaskTracker: a streamed task's view is what GetTask would answer, without reading it."""

from __future__ import annotations

from a2a.types import (
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.struct_pb2 import Struct

from accord.contracts.keys import SPENT_META_KEY, TOOL_CALLS_SPENT_META_KEY
from accord.contracts.status import ContractState, Status, WaitingReason
from accord.protocol.a2a.client.view import TaskTracker
from accord.protocol.a2a.wire import status_metadata


def _status(state: TaskState.ValueType, **meta: object) -> StreamResponse:
    metadata = Struct()
    metadata.update(meta)
    event = TaskStatusUpdateEvent(
        task_id="t-1", context_id="c-1", status=TaskStatus(state=state), metadata=metadata
    )
    return StreamResponse(status_update=event)


def test_status_updates_merge_their_metadata_into_the_task_as_the_server_does() -> None:
    tracker = TaskTracker()
    tracker.apply(
        StreamResponse(
            task=Task(
                id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
            )
        )
    )
    tracker.apply(
        _status(TaskState.TASK_STATE_WORKING, **{SPENT_META_KEY: 2, TOOL_CALLS_SPENT_META_KEY: 2})
    )
    view = tracker.apply(_status(TaskState.TASK_STATE_COMPLETED, other="kept"))
    # The spending a child reports at its start survives the later updates (a caller settles
    # its budget from it, with no GetTask after the stream).
    assert view.metadata[SPENT_META_KEY] == 2
    assert view.metadata[TOOL_CALLS_SPENT_META_KEY] == 2
    assert view.metadata["other"] == "kept"
    assert view.budget is not None
    assert view.budget["spent"] == {"units": 2, "tool_calls": 2}


def test_an_update_without_metadata_keeps_what_the_task_had() -> None:
    tracker = TaskTracker()
    tracker.apply(_status(TaskState.TASK_STATE_WORKING, **{SPENT_META_KEY: 1}))
    view = tracker.apply(
        StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id="t-1",
                context_id="c-1",
                status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
            )
        )
    )
    assert view.metadata[SPENT_META_KEY] == 1


def test_the_status_metadata_of_each_update_is_the_views_status() -> None:
    """An Accord agent's update without a message carries its status in its metadata only
    (A2A 1.0: no message without a part); the latest update's entry replaces the one before."""
    waiting = ContractState(status=Status.WAITING, waiting_reason=WaitingReason.APPROVAL)
    tracker = TaskTracker()
    view = tracker.apply(
        _status(TaskState.TASK_STATE_INPUT_REQUIRED, **status_metadata(waiting, node="approve"))
    )
    assert (view.state, view.node) == (waiting, "approve")
    running = ContractState(status=Status.RUNNING)
    view = tracker.apply(_status(TaskState.TASK_STATE_WORKING, **status_metadata(running)))
    assert (view.state, view.node, view.question) == (running, None, None)
