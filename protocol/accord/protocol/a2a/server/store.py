"""A durable, owner-scoped A2A task store that is nearly as fast as memory.

Implements a2a-sdk's ``TaskStore``. Each task is one row of the service's table
(``store_tables.py``): the protobuf bytes of the Task plus the columns we filter and sort on
(owner, context, state, status time). Saves go through the storage layer's group commit
(``accord.protocol.storage.database``): the saves of concurrent requests share one transaction
and one upsert statement, on SQLite (WAL, the commit on the event loop, checkpoints in a
thread; one process per file) and on PostgreSQL alike. The table is migrated at open.

Ownership: every row belongs to ``owner_resolver(context)`` (``app/subject`` of the verified
principal). A task of another owner is simply not found.

Recovery (:meth:`AccordTaskStore.recover`, at start and then every heartbeat): a task left
``queued`` or ``running`` by a process that is gone can never finish (its coroutine is gone),
so it is failed with UNAVAILABLE ("the agent restarted while working on it; retry"). Every row
names the process that saved it (``worker``), and every process renews its heartbeat while it
runs (:meth:`AccordTaskStore.keep_alive`, ``<table>_workers``), so with several replicas on one
PostgreSQL database a replica fails only the tasks of processes whose heartbeat expired
(``ACCORD_TASK_WORKER_TTL_S``, by the database's clock), never a live replica's; a SQLite file
has one process by design, so every earlier process's tasks are failed at start. Waiting tasks
stay waiting: they hold no process state, and the next message continues them.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any, Final

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
from sqlalchemy import Connection, bindparam, delete, func, select

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import ContractState, Status
from accord.protocol.a2a.server.store_tables import task_schema, task_table, workers_table
from accord.protocol.a2a.wire import (
    failed_status,
    read_status_meta,
    renderable,
    status_metadata,
)
from accord.protocol.settings import current
from accord.protocol.storage.database import Database, Txn
from accord.protocol.storage.prepared import Prepared

logger = logging.getLogger(__name__)

RESTART_MESSAGE: Final = "the agent restarted while working on it; retry"
UNFINISHED_STATES: Final = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
FINISHED_STATES: Final = (
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
)
PURGE_BATCH: Final = 500


INT64_MAX: Final = 2**63 - 1  # a timestamp column's range: later instants match nothing


def _clamped(ns: int) -> int:
    return max(-1, min(ns, INT64_MAX))


def _sort_ts(task: Task) -> int:
    if task.HasField("status") and task.status.HasField("timestamp"):
        return int(task.status.timestamp.ToNanoseconds())
    return -1


def fail_after_restart(task: Task) -> None:
    """Fail a task a dead process left unfinished: UNAVAILABLE, keeping its last message."""
    _end_failed(task, AccordError(ErrorCode.UNAVAILABLE, RESTART_MESSAGE, {"reason": "restart"}))


def _end_failed(task: Task, error: AccordError) -> None:
    """End ``task`` failed with ``error``: its status (the old message goes to the history),
    and the contract status in its metadata."""
    status = failed_status(error, task_id=task.id, context_id=task.context_id)
    status.timestamp.FromDatetime(datetime.now(UTC))
    if task.status.HasField("message"):
        task.history.append(task.status.message)
    task.status.CopyFrom(status)
    state = ContractState(status=Status.FAILED, error_code=error.code)
    task.metadata.update(status_metadata(state, error=error))


def contract_canceled(task: Task) -> None:
    """Give a canceled task the contract's status: failed with CANCELED, in the metadata and
    as the error DataPart. The SDK cancels a task that is not live in this process with a bare
    state change that keeps the old status message (and its old contract status); the store
    writes the contract's instead, into the task it was handed, which is also what the SDK
    answers the caller with."""
    message = task.status.message if task.status.HasField("message") else None
    meta = read_status_meta(message, task.metadata)
    if meta is not None and meta.get("status") == Status.FAILED.value:
        return  # already the contract's (a live cancel emitted it)
    _end_failed(task, AccordError(ErrorCode.CANCELED, "the task was canceled by its caller"))


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
        self._table = task_table(table)  # refuses a name that is not a safe table name
        self.url = url
        self.table = table
        self._owner = owner_resolver
        self.worker = f"worker-{uuid.uuid4().hex}"  # this process, in the rows it saves
        self.worker_ttl_s = worker_ttl_s if worker_ttl_s else current().task_worker_ttl_s
        self.retention_s = current().task_retention_s
        self.history_limit = current().task_history_limit
        self._purged_at = 0.0  # monotonic time of the last purge (keep_alive runs it)
        self.db = Database(url, unavailable="the task store is unavailable", checkpoint_every=200)
        self._open_lock = asyncio.Lock()
        t = self._table
        upsert = self.db.insert(t).values(
            owner=bindparam("owner"),
            id=bindparam("id"),
            context_id=bindparam("context_id"),
            state=bindparam("state"),
            ts=bindparam("ts"),
            blob=bindparam("blob"),
            worker=bindparam("worker"),
        )
        # Prepared: run on the driver, on every save and get (storage/prepared.py).
        self._upsert = Prepared(
            upsert.on_conflict_do_update(
                index_elements=[t.c.owner, t.c.id],
                set_={
                    c: upsert.excluded[c] for c in ("context_id", "state", "ts", "blob", "worker")
                },
            )
        )
        self._delete = Prepared(
            delete(t).where(t.c.owner == bindparam("owner"), t.c.id == bindparam("id"))
        )
        expired = (
            select(t.c.owner, t.c.id)
            .where(
                t.c.state.in_([int(s) for s in FINISHED_STATES]),
                t.c.ts < bindparam("before"),
            )
            .limit(PURGE_BATCH)
        )
        self._expired = expired
        self._get = Prepared(
            select(t.c.blob).where(t.c.owner == bindparam("owner"), t.c.id == bindparam("id"))
        )
        self._exists = Prepared(
            select(t.c.state).where(t.c.owner == bindparam("owner"), t.c.id == bindparam("id"))
        )
        workers = workers_table(self._table)
        alive = select(workers.c.worker).where(workers.c.expires_at > self.db.clock())
        # Unfinished and not this process's: another process's (SQLite: one process per file,
        # so every other one is gone); on PostgreSQL only if that process's heartbeat expired.
        orphan = t.c.worker.is_(None) | (t.c.worker != bindparam("me"))
        if not self.db.is_sqlite:
            orphan = t.c.worker.is_(None) | (
                (t.c.worker != bindparam("me")) & t.c.worker.not_in(alive)
            )
        self._orphans = (
            select(t.c.owner, t.c.blob)
            .where(t.c.state.in_(bindparam("states", expanding=True)), orphan)
            .with_for_update(skip_locked=True)
        )
        beat = self.db.insert(workers).values(
            worker=bindparam("worker"), expires_at=self.db.clock() + bindparam("ttl")
        )
        self._beat = beat.on_conflict_do_update(
            index_elements=[workers.c.worker], set_={"expires_at": beat.excluded.expires_at}
        )
        self._drop = delete(workers).where(workers.c.worker == bindparam("worker"))
        self._forget = delete(workers).where(workers.c.expires_at < self.db.clock() - 86_400)

    # -- lifecycle --------------------------------------------------------------------------
    async def open(self) -> AccordTaskStore:
        """Migrate the table and connect (once; later calls return at once)."""
        if not self.db.is_open:
            async with self._open_lock:
                await self.db.open(task_schema(self._table))
        return self

    async def close(self) -> None:
        if self.db.is_open:
            # A clean exit: this process's unfinished tasks are orphans now, for the others.
            await self.db.write(lambda txn: txn.conn.execute(self._drop, {"worker": self.worker}))
        await self.db.close()

    async def heartbeat(self) -> None:
        """Say this process is alive for one more TTL (``ACCORD_TASK_WORKER_TTL_S``)."""
        await self.open()
        params = {"worker": self.worker, "ttl": self.worker_ttl_s}
        await self.db.write(lambda txn: txn.conn.execute(self._beat, params))

    async def keep_alive(self) -> None:
        """Heartbeat every third of the TTL and fail the orphans of processes that died
        meanwhile, until cancelled (it runs for the life of the service); delete finished
        tasks past retention now and then."""
        while True:
            try:
                await self.heartbeat()
                await self.recover()
                interval = min(600.0, max(1.0, self.retention_s / 10))
                if time.monotonic() - self._purged_at >= interval:
                    self._purged_at = time.monotonic()
                    await self.purge_finished()
            except Exception:  # the database may be away a moment; try again next beat
                logger.exception("task store %s: heartbeat failed", self.table)
            await asyncio.sleep(self.worker_ttl_s / 3)

    async def recover(self) -> int:
        """Fail the queued/running tasks whose process is gone (see the module docstring);
        returns how many. A live replica's tasks are left alone; two replicas never rewrite
        the same task (rows are locked, the second skips them)."""
        await self.open()
        states = [int(s) for s in UNFINISHED_STATES]

        def run(txn: Txn) -> int:
            found = txn.conn.execute(self._orphans, {"states": states, "me": self.worker}).all()
            for owner, blob in found:
                task = Task.FromString(bytes(blob))
                fail_after_restart(task)
                self._upsert.execute(txn.conn, self._row(owner, task))
            txn.conn.execute(self._forget)
            return len(found)

        count = await self.db.write(run)
        if count:
            logger.warning(
                "task store %s: failed %d task(s) a gone process left unfinished",
                self.table,
                count,
            )
        return count

    def _row(self, owner: str, task: Task) -> dict[str, Any]:
        """The upsert's parameters for ``task``, saved by this process."""
        return _params(
            owner,
            task.id,
            task.context_id,
            int(task.status.state),
            _sort_ts(task),
            task.SerializeToString(),
            self.worker,
        )

    async def purge_finished(self) -> int:
        """Delete finished tasks whose status is older than ``retention_s``; how many."""
        await self.open()
        before = _clamped(int((time.time() - self.retention_s) * 1e9))
        t = self._table
        total = 0
        while True:

            def run(txn: Txn) -> int:
                rows = txn.conn.execute(self._expired, {"before": before}).all()
                for owner, task_id in rows:
                    self._delete.execute(txn.conn, {"owner": owner, "id": task_id})
                return len(rows)

            deleted = await self.db.write(run)
            total += deleted
            if deleted < PURGE_BATCH:
                break
        if total:
            logger.info("task store %s: deleted %d finished task(s) past retention", t.name, total)
        return total

    # -- TaskStore --------------------------------------------------------------------------
    async def save(self, task: Task, context: ServerCallContext) -> None:
        if task.status.state == TaskState.TASK_STATE_CANCELED:
            contract_canceled(task)
        if len(task.history) > self.history_limit:
            # A copy: the SDK goes on with its own task object; only what is kept is capped.
            kept = Task()
            kept.CopyFrom(task)
            del kept.history[: len(kept.history) - self.history_limit]
            task = kept
        await self._submit(self._upsert, self._row(self._owner(context), task))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        await self.open()
        params = {"owner": self._owner(context), "id": task_id}
        row = await self.db.read(lambda conn: self._get.execute(conn, params).fetchone())
        return Task.FromString(bytes(row[0])) if row is not None else None

    async def has(self, owner: str, task_id: str) -> bool:
        """Whether ``owner`` has the task (the send keys live as long as their task)."""
        await self.open()
        params = {"owner": owner, "id": task_id}
        row = await self.db.read(lambda conn: self._exists.execute(conn, params).fetchone())
        return row is not None

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self._submit(self._delete, {"owner": self._owner(context), "id": task_id})

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        await self.open()
        owner = self._owner(context)
        page_size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        after: tuple[int, str] | None = None
        inclusive = False
        if params.page_token:
            cursor = decode_list_tasks_cursor(params.page_token)
            if cursor is not None:
                after = (
                    _clamped(cursor.timestamp_ns) if cursor.timestamp_ns is not None else -1,
                    cursor.task_id,
                )
            else:
                start = await self.get(decode_page_token(params.page_token), context)
                if start is None:
                    # Not echoed: the caller's own text is not for an error message.
                    raise InvalidParamsError("Invalid page token (not one this agent issued)")
                after, inclusive = (_sort_ts(start), start.id), True
        t = self._table
        where = [t.c.owner == owner]
        if params.context_id:
            where.append(t.c.context_id == params.context_id)
        if int(params.status):
            where.append(t.c.state == int(params.status))
        if params.HasField("status_timestamp_after"):
            after_ns = _clamped(int(params.status_timestamp_after.ToNanoseconds()))
            where.append(t.c.ts >= after_ns)
        count = select(func.count()).select_from(t).where(*where)
        page = select(t.c.blob).where(*where)
        if after is not None:
            ts, task_id = after
            same_ts = t.c.id <= task_id if inclusive else t.c.id < task_id
            page = page.where((t.c.ts < ts) | ((t.c.ts == ts) & same_ts))
        page = page.order_by(t.c.ts.desc(), t.c.id.desc()).limit(page_size + 1)

        def run(conn: Connection) -> tuple[list[bytes], int]:
            total = int(conn.execute(count).scalar_one())
            return [bytes(r[0]) for r in conn.execute(page)], total

        blobs, total = await self.db.read(run, snapshot=True)
        page_tasks = [Task.FromString(b) for b in blobs[:page_size]]
        # Defence in depth: the gate refuses what protobuf's JSON cannot hold, but one row
        # that slipped in (an older version stored it) must not fail every listing.
        tasks: list[Task] = []
        for task in page_tasks:
            if renderable(task):
                tasks.append(task)
            else:
                logger.error(
                    "task store %s: task %s cannot be rendered, skipped", self.table, task.id
                )
        next_token = ""
        if len(blobs) > page_size and page_tasks:
            last = page_tasks[-1]
            ts = _sort_ts(last)
            next_token = encode_list_tasks_cursor(
                ListTasksCursor(timestamp_ns=ts if ts >= 0 else None, task_id=last.id)
            )
        return ListTasksResponse(
            next_page_token=next_token, tasks=tasks, total_size=total, page_size=page_size
        )

    # -- group commit -----------------------------------------------------------------------
    async def _submit(self, statement: Prepared, params: dict[str, Any]) -> None:
        """Queue a save or delete; the batch's writes go out in order, runs of saves in one
        statement, just before its commit."""
        await self.open()

        def run(txn: Txn) -> None:
            ops: list[tuple[Prepared, dict[str, Any]]] | None = txn.state.get("a2a_tasks")
            if ops is None:
                ops = txn.state["a2a_tasks"] = []
                txn.before_commit("a2a_tasks", lambda: _write_ops(txn.conn, ops))
            ops.append((statement, params))

        await self.db.write(run)


def _params(
    owner: str, task_id: str, context_id: str, state: int, ts: int, blob: bytes, worker: str
) -> dict[str, Any]:
    return {
        "owner": owner,
        "id": task_id,
        "context_id": context_id,
        "state": state,
        "ts": ts,
        "blob": blob,
        "worker": worker,
    }


def _write_ops(conn: Connection, ops: list[tuple[Prepared, dict[str, Any]]]) -> None:
    start = 0
    while start < len(ops):  # consecutive ops of one statement: one executemany
        statement = ops[start][0]
        end = start
        while end < len(ops) and ops[end][0] is statement:
            end += 1
        if end - start == 1:
            statement.execute(conn, ops[start][1])
        else:
            statement.executemany(conn, [p for _, p in ops[start:end]])
        start = end
