"""A durable, owner-scoped A2A task store that is nearly as fast as memory.

Implements a2a-sdk's ``TaskStore``. Each task is one row: the protobuf bytes of the Task plus
the columns we filter and sort on (owner, context, state, status time). Saves go through one
writer that commits every save queued while the previous commit ran in a single transaction
(group commit), so concurrent requests share a commit instead of queueing for one each.

* SQLite (default, ``sqlite:///path``): WAL, ``synchronous=NORMAL`` (a commit survives a
  process crash; the last commits may be lost on power loss). Reads and commits run on the
  event loop's own connection (a commit is a write to the WAL, tens of microseconds); the
  checkpoint, the one step that fsyncs, runs in a background thread. One process per file.
* PostgreSQL (``postgresql://...``): asyncpg, the same row layout, one writer task.

Ownership: every row belongs to ``owner_resolver(context)`` (``app/subject`` of the verified
principal). A task of another owner is simply not found.

Recovery (:meth:`AccordTaskStore.recover`, at start and then every heartbeat): a task left
``queued`` or ``running`` by a process that is gone can never finish (its coroutine is gone),
so it is failed with UNAVAILABLE ("the agent restarted while working on it; retry"). Every row
names the process that saved it, and every process renews its heartbeat while it runs
(:meth:`AccordTaskStore.keep_alive`), so with several replicas on one PostgreSQL database a
replica fails only the tasks of processes whose heartbeat expired (``ACCORD_TASK_WORKER_TTL_S``,
the database's clock), never a live replica's; a SQLite file has one process by design, so the
tasks of every earlier process are failed at start. Waiting tasks stay waiting: they hold no
process state, and the next message continues them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks.task_store import TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import (
    ListTasksCursor,
    decode_list_tasks_cursor,
    decode_page_token,
    encode_list_tasks_cursor,
)

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.store_backends import Backend, ListQuery, Rewritten, Row, open_backend
from accord.protocol.a2a.store_tables import task_table
from accord.protocol.a2a.wire import failed_status, read_status_meta
from accord.protocol.settings import current

logger = logging.getLogger(__name__)

RESTART_MESSAGE: Final = "the agent restarted while working on it; retry"
UNFINISHED_STATES: Final = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)


def _sort_ts(task: Task) -> int:
    if task.HasField("status") and task.status.HasField("timestamp"):
        return int(task.status.timestamp.ToNanoseconds())
    return -1


def fail_after_restart(task: Task) -> None:
    """Fail a task a dead process left unfinished: UNAVAILABLE, keeping its last message."""
    error = AccordError(ErrorCode.UNAVAILABLE, RESTART_MESSAGE, {"reason": "restart"})
    status = failed_status(error, task_id=task.id, context_id=task.context_id)
    status.timestamp.FromDatetime(datetime.now(UTC))
    if task.status.HasField("message"):
        task.history.append(task.status.message)
    task.status.CopyFrom(status)


def contract_canceled(task: Task) -> None:
    """Give a canceled task the contract's status: failed with CANCELED, in the metadata and
    as the error DataPart. The SDK cancels a task that is not live in this process with a bare
    state change that keeps the old status message (and its old contract status); the store
    writes the contract's instead, into the task it was handed, which is also what the SDK
    answers the caller with."""
    meta = read_status_meta(task.status.message) if task.status.HasField("message") else None
    if meta is not None and meta.get("status") == Status.FAILED.value:
        return  # already the contract's (a live cancel emitted it)
    error = AccordError(ErrorCode.CANCELED, "the task was canceled by its caller")
    status = failed_status(error, task_id=task.id, context_id=task.context_id)
    status.timestamp.FromDatetime(datetime.now(UTC))
    if task.status.HasField("message"):
        task.history.append(task.status.message)
    task.status.CopyFrom(status)


class AccordTaskStore(TaskStore):
    """SQLite or PostgreSQL by URL; see the module docstring."""

    def __init__(
        self,
        url: str,
        *,
        table: str = "a2a_tasks",
        owner_resolver: OwnerResolver = resolve_user_scope,
        worker_ttl_s: float | None = None,
    ) -> None:
        task_table(table)  # refuses a name that is not a safe table name
        self.url = url
        self.table = table
        self.worker = f"worker-{uuid.uuid4().hex}"  # this process, in the rows it saves
        self.worker_ttl_s = worker_ttl_s if worker_ttl_s else current().task_worker_ttl_s
        self._owner = owner_resolver
        self._backend: Backend | None = None
        self._open_lock = asyncio.Lock()
        self._pending: list[tuple[Row | tuple[str, str], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._flush_scheduled = False

    # -- lifecycle --------------------------------------------------------------------------
    async def open(self) -> Backend:
        if self._backend is None:
            async with self._open_lock:
                if self._backend is None:
                    self._backend = await open_backend(self.url, self.table)
        return self._backend

    async def close(self) -> None:
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        if self._backend is not None:
            await self._backend.drop_worker(self.worker)  # its running tasks are orphans now
            await self._backend.close()
            self._backend = None

    async def recover(self) -> int:
        """Fail the queued/running tasks whose process is gone (see the module docstring);
        returns how many. Safe with several replicas: a live one's tasks are left alone."""
        backend = await self.open()

        def fail(blob: bytes) -> Rewritten:
            task = Task.FromString(blob)
            fail_after_restart(task)
            return int(task.status.state), _sort_ts(task), task.SerializeToString()

        count = await backend.fail_orphans(self.worker, [int(s) for s in UNFINISHED_STATES], fail)
        if count:
            logger.warning(
                "task store %s: failed %d task(s) a gone process left unfinished",
                self.table,
                count,
            )
        return count

    async def heartbeat(self) -> None:
        """Say this process is alive for one more TTL (``ACCORD_TASK_WORKER_TTL_S``)."""
        backend = await self.open()
        await backend.heartbeat(self.worker, self.worker_ttl_s)

    async def keep_alive(self) -> None:
        """Heartbeat every third of the TTL and fail the orphans of processes that died
        meanwhile, until cancelled (run for the life of the service)."""
        while True:
            try:
                await self.heartbeat()
                await self.recover()
            except Exception:  # the database may be away for a moment; try again next beat
                logger.exception("task store %s: heartbeat failed", self.table)
            await asyncio.sleep(self.worker_ttl_s / 3)

    # -- TaskStore --------------------------------------------------------------------------
    async def save(self, task: Task, context: ServerCallContext) -> None:
        if task.status.state == TaskState.TASK_STATE_CANCELED:
            contract_canceled(task)
        row: Row = (
            self._owner(context),
            task.id,
            task.context_id,
            int(task.status.state),
            _sort_ts(task),
            task.SerializeToString(),
            self.worker,
        )
        await self._submit(row)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        backend = await self.open()
        blob = await backend.get(self._owner(context), task_id)
        return Task.FromString(blob) if blob is not None else None

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self._submit((self._owner(context), task_id))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        backend = await self.open()
        owner = self._owner(context)
        page_size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        after: tuple[int, str] | None = None
        inclusive = False
        if params.page_token:
            cursor = decode_list_tasks_cursor(params.page_token)
            if cursor is not None:
                after = (
                    cursor.timestamp_ns if cursor.timestamp_ns is not None else -1,
                    cursor.task_id,
                )
            else:
                start = await backend.get(owner, decode_page_token(params.page_token))
                if start is None:
                    raise InvalidParamsError(f"Invalid page token: {params.page_token}")
                first = Task.FromString(start)
                after, inclusive = (_sort_ts(first), first.id), True
        query = ListQuery(
            owner=owner,
            context_id=params.context_id or None,
            state=int(params.status) or None,
            min_ts=(
                int(params.status_timestamp_after.ToNanoseconds())
                if params.HasField("status_timestamp_after")
                else None
            ),
            after=after,
            inclusive=inclusive,
            limit=page_size + 1,
        )
        blobs, total = await backend.list(query)
        tasks = [Task.FromString(b) for b in blobs[:page_size]]
        next_token = ""
        if len(blobs) > page_size and tasks:
            last = tasks[-1]
            ts = _sort_ts(last)
            next_token = encode_list_tasks_cursor(
                ListTasksCursor(timestamp_ns=ts if ts >= 0 else None, task_id=last.id)
            )
        return ListTasksResponse(
            next_page_token=next_token, tasks=tasks, total_size=total, page_size=page_size
        )

    # -- group commit -----------------------------------------------------------------------
    async def _submit(self, op: Row | tuple[str, str]) -> None:
        backend = self._backend or await self.open()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((op, future))
        if backend.inline:
            # SQLite commits on the loop: one callback commits everything queued this turn.
            if not self._flush_scheduled:
                self._flush_scheduled = True
                loop.call_soon(self._flush_inline, backend)
        elif self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_loop())
        await future

    def _flush_inline(self, backend: Backend) -> None:
        self._flush_scheduled = False
        batch, self._pending = self._pending, []
        try:
            backend.write_now([op for op, _ in batch])
        except Exception as exc:  # every waiter hears about the failed commit
            logger.exception("task store %s: commit of %d op(s) failed", self.table, len(batch))
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for _, future in batch:
            if not future.done():
                future.set_result(None)

    async def _flush_loop(self) -> None:
        backend = await self.open()
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await backend.write([op for op, _ in batch])
            except Exception as exc:  # every waiter hears about the failed commit
                logger.exception("task store %s: commit of %d op(s) failed", self.table, len(batch))
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for _, future in batch:
                if not future.done():
                    future.set_result(None)
