"""Status updates that keep the contract, emitted through a2a-sdk's ``TaskUpdater``.

:class:`ContractTaskUpdater` is the SDK's updater (which already refuses anything after a
terminal state) with the contract's lifecycle on top. Every status it emits, through
:meth:`~ContractTaskUpdater.status` and :meth:`~ContractTaskUpdater.fail` or through the SDK's
own ``start_work()``, ``complete()``, ``failed()``...:

* is first checked as a legal contract transition (STATUS-003), a refused one raises
  CONTRACT_VIOLATION and emits nothing;
* carries the contract status (and error, and the node it reports on) in the update's metadata
  (which the SDK merges into the task's); it has a message only when there is something to say
  (text, data, an error), which repeats that metadata, and a failure repeats its error as a
  DataPart (see :mod:`accord.protocol.a2a.wire`);
* when it changes the status, counts in the task metrics and goes on the turn's span.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Final

from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, Part, TaskState, TaskStatus
from opentelemetry.trace import Span

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import RESULT_ARTIFACT_NAME
from accord.contracts.status import ContractState, Status, check_transition
from accord.protocol.a2a.wire import (
    a2a_task_state,
    read_contract_state,
    read_status_meta,
    status_message,
    status_metadata,
)
from accord.protocol.telemetry import instruments, mark_error, spans


class ContractTaskUpdater(TaskUpdater):
    """A TaskUpdater for one task that starts at contract status ``current``."""

    def __init__(
        self,
        event_queue: EventQueue,
        task_id: str,
        context_id: str,
        current: Status,
        *,
        agent: str = "",
        span: Span | None = None,  # the turn's invoke_agent span: a failure's code goes on it
    ) -> None:
        super().__init__(event_queue, task_id, context_id)
        self.current = current
        self.agent = agent
        self.span = span

    async def status(
        self,
        state: ContractState,
        *,
        text: str = "",
        data: dict[str, Any] | None = None,
        error: AccordError | None = None,
        node: str | None = None,
        task_meta: dict[str, Any] | None = None,
        message_id: str | None = None,
    ) -> None:
        """Emit ``state`` with the contract metadata and a status message of ``text`` and
        ``data`` (none when both are empty and there is no error); ``task_meta`` goes into the
        task's metadata; ``message_id`` names the message (default: a fresh id)."""
        message = status_message(
            state,
            task_id=self.task_id,
            context_id=self.context_id,
            text=text,
            data=data,
            error=error,
            node=node,
            message_id=message_id,
        )
        meta = {**(task_meta or {}), **status_metadata(state, error=error, node=node)}
        await self._emit(state, error, message, metadata=meta)

    async def fail(self, error: AccordError, *, node: str | None = None) -> None:
        """End the task failed with ``error`` (canceled, for code CANCELED)."""
        state = ContractState(status=Status.FAILED, error_code=error.code)
        await self.status(state, text=error.message, error=error, node=node)

    async def update_status(
        self,
        state: TaskState,
        message: Message | None = None,
        timestamp: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """The SDK's way in: the contract state is what the message's metadata says (or the
        contract's reading of ``state``); a message without contract metadata gets it, and the
        update's metadata always has it."""
        contract, error = read_contract_state(TaskStatus(state=state, message=message))
        given = read_status_meta(message) if message is not None else None
        if given is None:
            # The caller's parts first, then the error DataPart; no parts, no message.
            message = status_message(
                contract,
                task_id=self.task_id,
                context_id=self.context_id,
                error=error,
                parts=message.parts if message is not None else (),
            )
        node = given.get("node") if given is not None else None
        meta = {
            **(metadata or {}),
            **status_metadata(contract, error=error, node=node if isinstance(node, str) else None),
        }
        await self._emit(contract, error, message, metadata=meta, timestamp=timestamp)

    async def _emit(
        self,
        state: ContractState,
        error: AccordError | None,
        message: Message | None,
        *,
        metadata: dict[str, Any],
        timestamp: str | None = None,
    ) -> None:
        # A progress note while running is not a transition; everything else must be legal.
        if not (state.status is Status.RUNNING and self.current is Status.RUNNING):
            check_transition(self.current, state.status)
        # Checked and taken before the first await, so concurrent updates keep their order.
        previous, self.current = self.current, state.status
        await super().update_status(
            TaskState.Value(a2a_task_state(state)),
            message=message,
            timestamp=timestamp,
            metadata=metadata,
        )
        if state.status is not previous:
            self._measure(state.status, error)

    def _measure(self, status: Status, error: AccordError | None) -> None:
        """Tasks by status in the metrics; the status (and a failure's code) on the span."""
        measured = {spans.GEN_AI_AGENT_NAME: self.agent, spans.STATUS: status.value}
        failure = error if status is Status.FAILED else None
        if failure is not None:
            measured[spans.ERROR_TYPE] = failure.code.value
        instruments.tasks.add(1, measured)
        if self.span is not None:
            self.span.set_attribute(spans.STATUS, status.value)
            if failure is not None:
                mark_error(self.span, failure)


RESULT_ARTIFACT: Final = RESULT_ARTIFACT_NAME


class ArtifactStream:
    """One artifact sent in chunks while the task runs (A2A TaskArtifactUpdateEvent): the first
    chunk opens it, each later one has ``append``, the last has ``lastChunk``. A client that
    reads the task afterwards sees one artifact of all the parts."""

    def __init__(
        self, updater: ContractTaskUpdater, name: str, artifact_id: str, opening: Opening
    ) -> None:
        self._updater = updater
        self._opening = opening
        self.name = name
        self.artifact_id = artifact_id
        self._sent = 0
        self.closed = False

    async def write(self, *parts: Part, last: bool = False) -> None:
        if self.closed:
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION, f"artifact {self.name!r} was already closed"
            )
        await self._opening()
        if self._updater.current is not Status.RUNNING:
            # Chunks belong to a running task; after its end the SDK would drop them quietly.
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                f"artifact {self.name!r} written while the task is {self._updater.current.value}",
            )
        self.closed = last
        await self._updater.add_artifact(
            list(parts),
            artifact_id=self.artifact_id,
            name=self.name,
            append=self._sent > 0,
            last_chunk=last,
        )
        self._sent += 1

    async def close(self, *parts: Part) -> None:
        """Send the last chunk (``parts`` may be empty: the chunks before were everything)."""
        await self.write(*parts, last=True)


Opening = Callable[[], Awaitable[None]]
"""Opens the turn's task (its Task event and RUNNING status) unless it is open already."""


async def _open_already() -> None:
    """The opening of a turn whose task was opened before ``run()``."""


class Progress:
    """Handed to ``run()``: emits WORKING status updates naming the current step, and streams
    artifacts. A skill that answers with a message has no task to report on: ``updater`` is
    None and updates are dropped (streaming an artifact there is a contract violation).

    ``opening`` runs before the first update or chunk: a turn that may still answer with a
    message opens its task only when it first reports on it (a task it then has)."""

    def __init__(
        self, updater: ContractTaskUpdater | None, opening: Opening = _open_already
    ) -> None:
        self._updater = updater
        self._opening = opening

    async def update(
        self,
        text: str,
        *,
        node: str | None = None,
        data: dict[str, Any] | None = None,
        event_id: str | None = None,
    ) -> None:
        """A progress note. ``event_id`` (the message's id) when the agent can name this note
        the same way on every later read of the task (its history): a resumed subscription
        then knows which notes its client saw (docs/replicas.md "Resuming a stream")."""
        if self._updater is None:
            return
        await self._opening()
        await self._updater.status(
            ContractState(status=Status.RUNNING),
            text=text,
            node=node,
            data=data,
            message_id=event_id,
        )

    def artifact(self, name: str, *, artifact_id: str | None = None) -> ArtifactStream:
        """A new artifact to stream in chunks (``write``, then ``close``)."""
        if self._updater is None:
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION, "a skill that replies with a message has no task"
            )
        if name == RESULT_ARTIFACT:
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                f"the artifact name {RESULT_ARTIFACT!r} is the result's: return it in Completed",
            )
        return ArtifactStream(self._updater, name, artifact_id or uuid.uuid4().hex, self._opening)
