"""The workflow event log: a small interface, one implementation on SQLite and PostgreSQL.

A log keeps, per workflow, an append-only list of events with sequence numbers 1..version,
plus three projections maintained in the same transaction as the append, so that they can
never disagree with the events:

    workflows  id, version, status, graph key, lease owner, closed; for listing: the owner
               scope and A2A context given when it was created, the time of the last append
    timers     (workflow id, timer id) -> due time      (from timer_set / timer_fired / resumed)
    owners     owner id -> heartbeat expiry              (leases: who is alive)

`append` is the only way to write events; it checks the caller's expected version (one writer
per workflow, optimistic) and refuses anything after `canceled` or `workflow_finished`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.runtime.workflow.events import LogEvent, NewEvent, Timer


class VersionConflictError(AccordError):
    """Someone else appended to this workflow since the caller read it (retry: reload)."""

    def __init__(self, workflow_id: str, expected: int, actual: int | None) -> None:
        super().__init__(
            ErrorCode.UNAVAILABLE,
            "the workflow was changed by another writer",
            {"workflow_id": workflow_id, "expected_version": expected, "actual_version": actual},
        )
        self.workflow_id = workflow_id
        self.expected = expected
        self.actual = actual


class WorkflowClosedError(AccordError):
    """The workflow was canceled or finished: its log takes no more events."""

    def __init__(self, workflow_id: str) -> None:
        super().__init__(
            ErrorCode.UNSUPPORTED_OPERATION,
            "the workflow is canceled or finished",
            {"workflow_id": workflow_id},
        )
        self.workflow_id = workflow_id


@dataclass(frozen=True, slots=True)
class WorkflowRecord:
    """The `workflows` row: what recovery and routing need without reading the events."""

    workflow_id: str
    version: int
    status: Status
    graph_key: str  # "name@version" of the graph it started on
    lease_owner: str | None
    closed: bool
    scope: str | None  # owner scope "app/subject" of its task (given at creation)
    context_id: str | None  # A2A context of its task (given at creation)
    updated_at: float  # seconds since the epoch of the last append


def graph_key(name: str, version: str) -> str:
    return f"{name}@{version}"


def started_graph_key(events: Sequence[NewEvent]) -> str:
    """The graph key from the workflow_started event of a creating append."""
    for event in events:
        data: dict[str, Any] = event.data
        if "graph" in data and "version" in data:
            return graph_key(str(data["graph"]), str(data["version"]))
    return ""


class EventLog(ABC):
    """Append-only per-workflow event log with leases and durable timers."""

    @abstractmethod
    async def open(self) -> None:
        """Connect and create the tables if needed."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections (pending appends finish first)."""

    @abstractmethod
    async def append(
        self,
        workflow_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        *,
        status: Status | None = None,
        owner: str | None = None,
        scope: str | None = None,
        context_id: str | None = None,
    ) -> list[LogEvent]:
        """Append atomically. ``expected_version`` 0 creates the workflow (leased to ``owner``,
        listed under ``scope`` and ``context_id``; both are ignored on later appends).

        ``status`` updates the workflow's status; any status other than running also releases
        its lease. Every append sets the workflow's ``updated_at``. Raises VersionConflictError
        or WorkflowClosedError and then writes nothing.
        """

    @abstractmethod
    async def read(self, workflow_id: str) -> list[LogEvent]:
        """All events of a workflow in sequence order (empty if it does not exist)."""

    @abstractmethod
    async def record(self, workflow_id: str) -> WorkflowRecord | None:
        """The workflow's row, or None."""

    @abstractmethod
    async def list_workflows(
        self,
        scope: str,
        *,
        context_id: str | None = None,
        status: Status | None = None,
        updated_after: float | None = None,
        after: tuple[float, str] | None = None,
        limit: int,
    ) -> tuple[list[WorkflowRecord], int]:
        """The workflows of ``scope``, newest append first (``updated_at`` desc, id desc).

        Filters: ``context_id``, ``status``, ``updated_after`` (updated at or after, seconds
        since the epoch). ``after`` is the keyset cursor: the (updated_at, id) of the last
        record of the previous page; the page holds the records strictly after it, at most
        ``limit``. The count is of every record the filters match, ignoring the cursor.
        """

    @abstractmethod
    async def heartbeat(self, owner: str, ttl_s: float) -> None:
        """Declare ``owner`` alive for ``ttl_s`` more seconds (one row per process)."""

    @abstractmethod
    async def drop_owner(self, owner: str) -> None:
        """Declare ``owner`` dead now: its running workflows become claimable at once."""

    @abstractmethod
    async def acquire(self, workflow_id: str, owner: str) -> bool:
        """Lease one open workflow unless a live other owner holds it."""

    @abstractmethod
    async def release(self, workflow_id: str, owner: str) -> None:
        """Give a lease back (no-op if ``owner`` does not hold it)."""

    @abstractmethod
    async def claim_orphans(self, owner: str, graph_keys: Sequence[str], limit: int) -> list[str]:
        """Lease running workflows whose owner is dead, on graphs this owner can run.

        Atomic across processes: each orphan is claimed by exactly one caller.
        """

    @abstractmethod
    async def next_timer(self) -> Timer | None:
        """The earliest pending timer of any workflow."""

    @abstractmethod
    async def due_timers(self, now: float, limit: int) -> list[Timer]:
        """Pending timers due at or before ``now``, earliest first."""

    @abstractmethod
    async def purge_closed(self, older_than_s: float, limit: int) -> int:
        """Delete up to ``limit`` closed workflows (events, timers, row) whose last append is
        more than ``older_than_s`` old by the log's clock; how many were deleted. A workflow
        that is still open (running, waiting) is never deleted, however old."""


def open_event_log(url: str) -> EventLog:
    """An (unopened) event log for ``sqlite:///path`` or ``postgresql://...``."""
    from accord.runtime.workflow.eventlog_sql import SqlEventLog

    return SqlEventLog(url)
