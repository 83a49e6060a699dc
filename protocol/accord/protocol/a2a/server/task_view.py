"""A task as an agent's own record describes it: the A2A view, without the SDK's types.

An agent whose tasks are derived from another record (e.g. its workflow log) hands
the protocol layer :class:`ServerTaskView` values through a :class:`TaskSource`; the
:class:`~accord.protocol.a2a.server.derived_store.DerivedTaskStore` turns them into A2A tasks.
Nothing here imports a2a-sdk, so agent code builds views without touching the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from accord.contracts.errors import AccordError
from accord.contracts.status import TERMINAL, ContractState, Status


@dataclass(frozen=True, slots=True)
class ViewMessage:
    """One message of a task: the user's, or an agent status message with contract state."""

    message_id: str
    role: Literal["user", "agent"]
    text: str = ""
    data: Mapping[str, Any] | None = None
    state: ContractState | None = None  # agent status messages: the contract status metadata
    error: AccordError | None = None
    node: str | None = None


@dataclass(frozen=True, slots=True)
class ViewArtifact:
    """An artifact of one DataPart (``data``) or of one text part for a person (``text``)."""

    artifact_id: str
    name: str
    data: Mapping[str, Any] | None = None
    text: str | None = None
    media_type: str = "text/plain"  # of ``text``


@dataclass(frozen=True, slots=True)
class ServerTaskView:
    """What a task is now: its state and status message, the messages before, its artifacts."""

    task_id: str
    context_id: str
    state: ContractState
    updated_at: datetime
    status_message: ViewMessage | None = None
    history: Sequence[ViewMessage] = ()
    artifacts: Sequence[ViewArtifact] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    sort_key: float | None = None  # the record's exact order key (default: updated_at)

    @property
    def order(self) -> tuple[float, str]:
        """Where the task sorts in a listing (newest first): (time, id)."""
        key = self.sort_key if self.sort_key is not None else self.updated_at.timestamp()
        return key, self.task_id

    @property
    def is_terminal(self) -> bool:
        return self.state.status in TERMINAL


@dataclass(frozen=True, slots=True)
class ViewQuery:
    """ListTasks filters, already decoded: contract status, context, time, keyset cursor."""

    context_id: str | None = None
    status: Status | None = None
    updated_after: datetime | None = None
    after: tuple[float, str] | None = None  # strictly below this ServerTaskView.order, newest first
    limit: int = 50


@dataclass(frozen=True, slots=True)
class ViewPage:
    views: Sequence[ServerTaskView]
    total: int


class TaskSource(Protocol):
    """Where an agent's tasks really live. ``scope`` is the owner scope ("app/subject") of the
    verified caller: a task of another scope does not exist for it."""

    async def get_view(self, task_id: str, scope: str) -> ServerTaskView | None:
        """The task, or None (absent, or another scope's)."""

    async def list_views(self, scope: str, query: ViewQuery) -> ViewPage:
        """The scope's tasks, newest first."""

    async def cancel(self, task_id: str, scope: str) -> ServerTaskView | None:
        """Cancel the task's work; the view after it (None: no such task)."""

    async def record_refused(self, view: ServerTaskView, scope: str) -> None:
        """Keep a task that ended before any work began (refused at its first turn)."""


@runtime_checkable
class TaskPresence(Protocol):
    """Optional beside :class:`TaskSource`: a source that can tell whether it has a task more
    cheaply than building its view (DerivedTaskStore asks on every task that ends; a source
    without it is asked for the view)."""

    async def has_task(self, task_id: str, scope: str) -> bool:
        """Whether ``get_view`` would find the task, without building its view."""
