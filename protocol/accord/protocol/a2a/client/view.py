"""What a caller sees of a remote task: a small typed view built from A2A wire objects.

Pure functions, no I/O. The contract state is read from the A2A TaskState plus, when the peer
is an Accord agent, the status metadata under ``dev.accord/status`` (in the task's metadata;
a peer of 0.1 or 0.2 put it in the status message's) and the error DataPart of kind
``dev.accord/error``. A peer that sends neither (any other A2A 1.0 agent) is read by the
documented defaults of :func:`accord.contracts.status.from_a2a`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a.types.a2a_pb2 import Artifact, Message, Part, StreamResponse, Task, TaskState
from google.protobuf import json_format

from accord.contracts.errors import AccordError
from accord.contracts.keys import (
    ERROR_DATA_KIND,
    REMAINING_META_KEY,
    RESULT_ARTIFACT_NAME,
    SPENT_META_KEY,
    TOOL_CALLS_SPENT_META_KEY,
)
from accord.contracts.status import TERMINAL, A2AState, ContractState, Status, WaitingReason
from accord.protocol.a2a.wire import plain, read_contract_state, read_error, read_status_meta


@dataclass(frozen=True)
class TaskView:
    """One remote task as the contract sees it.

    ``data`` is the first DataPart of the latest artifact (numbers that are whole come back as
    ``int``: protobuf carries every JSON number as a double). ``text`` joins the artifacts' text
    parts. ``question`` is the status message when the task waits. ``status_text`` is the text of
    the latest status message (progress lines while it runs).
    """

    task_id: str
    context_id: str
    state: ContractState
    a2a_state: str
    data: dict[str, Any] | None = None
    text: str = ""
    question: str | None = None
    error: AccordError | None = None
    node: str | None = None
    status_text: str = ""
    artifacts: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    metadata: Mapping[str, Any] = field(default_factory=dict, repr=False)  # the task's
    # The id of the status message this view shows: an event's id, where a resumed stream
    # starts from (`Last-Event-ID`, docs/replicas.md "Resuming a stream").
    event_id: str | None = field(default=None, repr=False, compare=False)

    @property
    def status(self) -> Status:
        return self.state.status

    @property
    def waiting_reason(self) -> WaitingReason | None:
        return self.state.waiting_reason

    @property
    def is_terminal(self) -> bool:
        return self.state.status in TERMINAL

    @property
    def declined(self) -> bool:
        """Failed because the agent declined the request (A2A TASK_STATE_REJECTED): ``error``
        says why, and a retry of the same request cannot change it."""
        return self.state.declined

    def artifact(self, name: str) -> Mapping[str, Any] | None:
        """The (last) artifact named ``name``, as wire JSON (``parts``...), if there is one."""
        return next((a for a in reversed(self.artifacts) if a.get("name") == name), None)

    def artifact_text(self, name: str) -> str | None:
        """The text parts of the artifact named ``name``, joined (None: no such artifact)."""
        found = self.artifact(name)
        if found is None:
            return None
        return "".join(str(p["text"]) for p in found.get("parts", []) if "text" in p)

    @property
    def is_interrupted(self) -> bool:
        """The task stopped for the caller: terminal, or waiting for something."""
        return self.is_terminal or self.state.status is Status.WAITING

    @property
    def budget(self) -> dict[str, dict[str, int]] | None:
        """What the task (for a request: its whole tree) spent of its envelope's budget and what
        remains, from the task's metadata; None when the agent reports no spending."""
        units = self.metadata.get(SPENT_META_KEY)
        calls = self.metadata.get(TOOL_CALLS_SPENT_META_KEY)
        if not isinstance(units, int | float) and not isinstance(calls, int | float):
            return None
        spent = {"units": int(units or 0), "tool_calls": int(calls or 0)}
        left = self.metadata.get(REMAINING_META_KEY)
        remaining = (
            {str(k): int(v) for k, v in left.items() if isinstance(v, int | float)}
            if isinstance(left, Mapping)
            else {}
        )
        return {"spent": spent, "remaining": remaining}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON for scripts and logs (``accord call --json``)."""
        return {
            "task_id": self.task_id,
            "context_id": self.context_id,
            "status": self.state.status.value,
            "waiting_reason": (
                self.state.waiting_reason.value if self.state.waiting_reason else None
            ),
            "error_code": self.state.error_code.value if self.state.error_code else None,
            "declined": self.state.declined,
            "a2a_state": self.a2a_state,
            "data": self.data,
            "text": self.text,
            "question": self.question,
            "error": self.error.to_dict() if self.error is not None else None,
            "node": self.node,
            "budget": self.budget,
        }


_STATE_NAMES = {value: name for name, value in TaskState.items()}


def a2a_state_name(state: int) -> str:
    return str(_STATE_NAMES.get(state, "TASK_STATE_UNSPECIFIED"))


def part_data(part: Part) -> Any:
    return plain(json_format.MessageToDict(part.data)) if part.HasField("data") else None


def texts(parts: Iterable[Part]) -> str:
    return "\n".join(p.text for p in parts if p.HasField("text") and p.text)


def first_data(parts: Iterable[Part]) -> dict[str, Any] | None:
    """The first object DataPart that is not an error DataPart."""
    for part in parts:
        data = part_data(part)
        if isinstance(data, dict) and data.get("kind") != ERROR_DATA_KIND:
            return data
    return None


def view_of_task(task: Task, *, artifacts: Iterable[Artifact] | None = None) -> TaskView:
    """Read a Task (from SendMessage, GetTask, CancelTask or a stream) as a view."""
    arts = list(task.artifacts if artifacts is None else artifacts)
    status_message = task.status.message if task.status.HasField("message") else None
    # The status message and the task's metadata as JSON once, for the status metadata (state,
    # node) and the error DataPart.
    status_json = json_format.MessageToDict(status_message) if status_message is not None else None
    task_meta = plain(json_format.MessageToDict(task.metadata)) if task.metadata else {}
    state, error = read_contract_state(
        {"state": TaskState.Name(task.status.state), "message": status_json}, task_meta
    )
    status_text = texts(status_message.parts) if status_message is not None else ""
    if error is not None and status_text and read_error(status_json, task_meta) is None:
        # A foreign peer: its status text is the only explanation there is.
        error = AccordError(error.code, status_text)
    node = (read_status_meta(status_json, task_meta) or {}).get("node")
    data = None
    text_parts: list[str] = []
    result = next((a for a in arts if a.name == RESULT_ARTIFACT_NAME), None)
    if result is not None:
        # An Accord agent: the result artifact is the data, the closing words are the status
        # text; its other artifacts (a receipt, files) are in ``artifacts``, by name.
        data = first_data(result.parts)
    else:
        for artifact in arts:
            data = first_data(artifact.parts) or data
            if t := texts(artifact.parts):
                text_parts.append(t)
    return TaskView(
        task_id=task.id,
        context_id=task.context_id,
        state=state,
        a2a_state=a2a_state_name(task.status.state),
        data=data,
        # An agent may put its closing words in the final status message instead of an artifact.
        text="\n".join(text_parts) or (status_text if state.status is Status.COMPLETED else ""),
        question=(status_text or None) if state.status is Status.WAITING else None,
        error=error,
        node=node if isinstance(node, str) else None,
        status_text=status_text,
        artifacts=tuple(struct_dict_of_artifact(a) for a in arts),
        metadata=task_meta,
        event_id=(status_message.message_id or None) if status_message is not None else None,
    )


def struct_dict_of_artifact(artifact: Artifact) -> dict[str, Any]:
    out = plain(json_format.MessageToDict(artifact))
    return out if isinstance(out, dict) else {}


def view_of_message(message: Message) -> TaskView:
    """A peer that answers with a Message instead of a Task: a finished, stateless reply."""
    return TaskView(
        task_id=message.task_id,
        context_id=message.context_id,
        state=ContractState(status=Status.COMPLETED),
        a2a_state=A2AState.COMPLETED.value,
        data=first_data(message.parts),
        text=texts(message.parts),
        status_text=texts(message.parts),
    )


class TaskTracker:
    """Folds a stream of A2A events into the latest :class:`TaskView`.

    Status updates replace the status and merge their metadata into the task's, as the
    SDK's server-side TaskManager does (so a streamed view's ``metadata`` is what GetTask would
    answer, with no second round trip); artifact updates add or extend artifacts by id
    (``append``), as the A2A streaming rules say.
    """

    def __init__(self) -> None:
        self.task = Task()
        self._artifacts: dict[str, Artifact] = {}
        self._order: list[str] = []
        self.view: TaskView | None = None

    def apply(self, event: StreamResponse) -> TaskView:
        kind = event.WhichOneof("payload")
        if kind == "task":
            self.task.CopyFrom(event.task)
            self._artifacts.clear()
            self._order.clear()
            for artifact in event.task.artifacts:
                self._put(artifact, append=False)
        elif kind == "status_update":
            update = event.status_update
            self.task.id = update.task_id or self.task.id
            self.task.context_id = update.context_id or self.task.context_id
            self.task.status.CopyFrom(update.status)
            if update.HasField("metadata"):
                self.task.metadata.MergeFrom(update.metadata)
        elif kind == "artifact_update":
            update = event.artifact_update
            self.task.id = update.task_id or self.task.id
            self.task.context_id = update.context_id or self.task.context_id
            self._put(update.artifact, append=update.append)
            if self.task.status.state == TaskState.TASK_STATE_UNSPECIFIED:
                # An artifact before any status (a continued task's stream may start so):
                # the task exists and is producing output, so it is working.
                self.task.status.state = TaskState.TASK_STATE_WORKING
        elif kind == "message":
            self.view = view_of_message(event.message)
            return self.view
        arts = [self._artifacts[i] for i in self._order]
        self.view = view_of_task(self.task, artifacts=arts)
        return self.view

    def _put(self, artifact: Artifact, *, append: bool) -> None:
        key = artifact.artifact_id or f"#{len(self._order)}"
        existing = self._artifacts.get(key)
        if existing is not None and append:
            existing.parts.extend(artifact.parts)
            return
        copy = Artifact()
        copy.CopyFrom(artifact)
        if key not in self._artifacts:
            self._order.append(key)
        self._artifacts[key] = copy
