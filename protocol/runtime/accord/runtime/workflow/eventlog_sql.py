"""The event log on the storage layer: the same statements on SQLite and PostgreSQL.

Appends (and the other writes) go through the database's group commit
(:class:`accord.protocol.storage.database.Database`): the appends of concurrent workflows share
one transaction. Within it, the rows of every workflow in the batch are read once (``SELECT
... FOR UPDATE`` on PostgreSQL, ordered by id so that replicas never deadlock; SQLite's
``BEGIN IMMEDIATE`` already excludes other writers), each append is checked against them
before anything is written (expected version, closed), so a conflicting call fails alone,
and the events of the whole batch are inserted in one statement. A creating append inserts its
row with ``ON CONFLICT DO NOTHING``, so two replicas creating one workflow cannot both win; the
primary key (workflow_id, seq) is the last line of defence. The workflow row is rewritten only
when the status changes; ``updated_at`` of every workflow appended to is set once per batch.

Leases are measured by the database's clock (``Database.clock``) on both databases, so
replicas' clocks need not agree; orphans are claimed with ``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, so two replicas recovering at once never take the same workflow. Timer rows are
upserted: a ``timer_set`` for an existing (workflow, timer) moves its due time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Boolean,
    Connection,
    Double,
    bindparam,
    case,
    delete,
    false,
    func,
    null,
    select,
    true,
    update,
)
from sqlalchemy.sql import Select

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.storage.database import Database, Txn
from accord.protocol.storage.prepared import Prepared
from accord.runtime.workflow.eventlog import (
    EventLog,
    VersionConflictError,
    WorkflowClosedError,
    WorkflowRecord,
    started_graph_key,
)
from accord.runtime.workflow.events import CLOSING, EventType, LogEvent, NewEvent, Timer
from accord.runtime.workflow.tables import (
    SCHEMA,
    workflow_events,
    workflow_owners,
    workflow_runs,
    workflow_timers,
)

runs, events, timers, owners = workflow_runs, workflow_events, workflow_timers, workflow_owners

_CLEARS_TIMER = frozenset({EventType.TIMER_FIRED, EventType.RESUMED})
_TOUCHES_TIMERS = _CLEARS_TIMER | {EventType.TIMER_SET}
_VERSION = (
    select(func.coalesce(func.max(events.c.seq), 0))
    .where(events.c.workflow_id == runs.c.id)
    .scalar_subquery()
)
_RECORD = (
    _VERSION,
    runs.c.id,
    runs.c.status,
    runs.c.graph_key,
    runs.c.lease_owner,
    runs.c.closed,
    runs.c.scope,
    runs.c.context_id,
    runs.c.updated_at,
)
_HEADS = Prepared(
    select(runs.c.id, runs.c.status, runs.c.closed, _VERSION)
    .where(runs.c.id.in_(bindparam("ids", expanding=True)))
    .order_by(runs.c.id)
    .with_for_update(of=runs)
)
_RECORD_BY_ID = select(*_RECORD).where(runs.c.id == bindparam("wid"))
_EVENTS_OF = (
    select(events.c.seq, events.c.type, events.c.node, events.c.data, events.c.at)
    .where(events.c.workflow_id == bindparam("wid"))
    .order_by(events.c.seq)
)
# Prepared: executed per append (or per batch), on the driver beneath SQLAlchemy (prepared.py).
_INSERT_EVENTS = Prepared(
    events.insert().values(
        workflow_id=bindparam("workflow_id"),
        seq=bindparam("seq"),
        type=bindparam("type"),
        node=bindparam("node"),
        data=bindparam("data"),
        at=bindparam("at"),
    )
)
_SET_STATUS = Prepared(
    update(runs)
    .where(runs.c.id == bindparam("b_id"))
    .values(
        status=bindparam("b_status"),
        closed=bindparam("b_closed"),
        lease_owner=case((bindparam("b_release", type_=Boolean), null()), else_=runs.c.lease_owner),
    )
)
_TOUCH = Prepared(
    update(runs).where(runs.c.id == bindparam("b_id")).values(updated_at=bindparam("b_at"))
)
_DELETE_TIMER = Prepared(
    delete(timers).where(
        timers.c.workflow_id == bindparam("wid"), timers.c.timer_id == bindparam("tid")
    )
)
_DELETE_TIMERS = Prepared(delete(timers).where(timers.c.workflow_id == bindparam("wid")))
_RELEASE = (
    update(runs)
    .where(runs.c.id == bindparam("wid"), runs.c.lease_owner == bindparam("owner"))
    .values(lease_owner=None)
)
_DROP_OWNER = delete(owners).where(owners.c.owner == bindparam("owner"))
_NEXT_TIMER = select(timers.c.workflow_id, timers.c.timer_id, timers.c.due_at).order_by(
    timers.c.due_at
)
_DUE_TIMERS = (
    select(timers.c.workflow_id, timers.c.timer_id, timers.c.due_at)
    .where(timers.c.due_at <= bindparam("now"))
    .order_by(timers.c.due_at)
    .limit(bindparam("limit"))
)
_HEADS_CHUNK = 64  # ids per read of the batch's rows (one compiled variant per length)


class SqlEventLog(EventLog):
    def __init__(self, url: str, *, lock_wait_s: float = 10.0, checkpoint_every: int = 256) -> None:
        self.db = Database(
            url,
            unavailable="the workflow event log is unavailable",
            lock_wait_s=lock_wait_s,
            checkpoint_every=checkpoint_every,
        )
        db = self.db
        self._create = Prepared(
            db.insert(runs)
            .values(
                id=bindparam("b_id"),
                status=bindparam("b_status"),
                graph_key=bindparam("b_key"),
                lease_owner=bindparam("b_owner"),
                closed=bindparam("b_closed"),
                scope=bindparam("b_scope"),
                context_id=bindparam("b_context"),
                updated_at=bindparam("b_at"),
            )
            .on_conflict_do_nothing(index_elements=[runs.c.id])
            .returning(runs.c.id)
        )
        set_timer = db.insert(timers).values(
            workflow_id=bindparam("wid"), timer_id=bindparam("tid"), due_at=bindparam("due")
        )
        self._set_timer = Prepared(
            set_timer.on_conflict_do_update(
                index_elements=[timers.c.workflow_id, timers.c.timer_id],
                set_={"due_at": set_timer.excluded.due_at},
            )
        )
        beat = db.insert(owners).values(
            owner=bindparam("owner"), expires_at=db.clock() + bindparam("ttl", type_=Double)
        )
        self._heartbeat = beat.on_conflict_do_update(
            index_elements=[owners.c.owner], set_={"expires_at": beat.excluded.expires_at}
        )
        live = select(owners.c.owner).where(owners.c.expires_at > db.clock())
        self._acquire = (
            update(runs)
            .where(
                runs.c.id == bindparam("wid"),
                runs.c.closed == false(),
                runs.c.lease_owner.is_(None)
                | (runs.c.lease_owner == bindparam("owner"))
                | runs.c.lease_owner.not_in(live),
            )
            .values(lease_owner=bindparam("owner"))
        )
        orphan = runs.alias("orphan")
        orphans = (
            select(orphan.c.id)
            .where(
                orphan.c.status == Status.RUNNING.value,
                orphan.c.closed == false(),
                orphan.c.graph_key.in_(bindparam("keys", expanding=True)),
                orphan.c.lease_owner.is_(None) | orphan.c.lease_owner.not_in(live),
            )
            .limit(bindparam("limit"))
            .with_for_update(skip_locked=True)
        )
        self._claim = (
            update(runs)
            .where(runs.c.id.in_(orphans))
            .values(lease_owner=bindparam("owner"))
            .returning(runs.c.id)
        )

    async def open(self) -> None:
        await self.db.open(SCHEMA)  # migrations first, safe with other processes / replicas

    async def close(self) -> None:
        await self.db.close()

    # -- appends --------------------------------------------------------------------------------
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
        try:
            encoded = [event.data_json() for event in events]
        except (TypeError, ValueError):
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                "workflow events must be JSON",
                {"workflow_id": workflow_id},
            ) from None

        def run(txn: Txn) -> list[LogEvent]:
            return self._append(
                txn,
                workflow_id,
                expected_version,
                events,
                encoded,
                status,
                owner,
                (scope, context_id),
            )

        return await self.db.write(run, key=workflow_id)

    def _append(
        self,
        txn: Txn,
        workflow_id: str,
        expected: int,
        new: Sequence[NewEvent],
        encoded: list[str],
        status: Status | None,
        owner: str | None,
        listing: tuple[str | None, str | None],
    ) -> list[LogEvent]:
        # Everything that can fail is checked before the first write, so a failed call writes
        # nothing and the rest of its batch commits.
        batch = _batch(txn)
        conn, now = txn.conn, txn.now
        head = batch.heads.get(workflow_id)
        closing = any(e.type in CLOSING for e in new)
        seq = expected + len(new)
        if expected == 0:
            if head is not None:
                raise VersionConflictError(workflow_id, expected, head[2])
            new_status = (status or Status.RUNNING).value
            created = self._create.execute(
                conn,
                {
                    "b_id": workflow_id,
                    "b_status": new_status,
                    "b_key": started_graph_key(new),
                    "b_owner": owner,
                    "b_closed": closing,
                    "b_scope": listing[0],
                    "b_context": listing[1],
                    "b_at": now,
                },
            ).fetchone()
            if created is None:  # another replica created it since we looked
                raise VersionConflictError(workflow_id, expected, None)
            batch.heads[workflow_id] = [new_status, closing, seq]
        else:
            if head is None:
                raise VersionConflictError(workflow_id, expected, None)
            if head[1]:
                raise WorkflowClosedError(workflow_id)
            if head[2] != expected:
                raise VersionConflictError(workflow_id, expected, head[2])
            new_status = status.value if status is not None else head[0]
            if new_status != head[0] or closing:
                _SET_STATUS.execute(
                    conn,
                    {
                        "b_id": workflow_id,
                        "b_status": new_status,
                        "b_closed": closing,
                        "b_release": new_status != Status.RUNNING.value,
                    },
                )
            head[0], head[1], head[2] = new_status, closing, seq
            batch.touched[workflow_id] = now
        appended = []
        for i, (event, data) in enumerate(zip(new, encoded, strict=True), start=expected + 1):
            batch.rows.append(
                {
                    "workflow_id": workflow_id,
                    "seq": i,
                    "type": event.type.value,
                    "node": event.node,
                    "data": data,
                    "at": now,
                }
            )
            appended.append(LogEvent(workflow_id, i, event.type, event.node, event.data, now))
        if any(e.type in _TOUCHES_TIMERS for e in new):
            self._project_timers(conn, workflow_id, new)
        if closing:
            _DELETE_TIMERS.execute(conn, {"wid": workflow_id})
        return appended

    def _project_timers(self, conn: Connection, workflow_id: str, new: Sequence[NewEvent]) -> None:
        for event in new:
            if event.type is EventType.TIMER_SET:
                self._set_timer.execute(
                    conn,
                    {
                        "wid": workflow_id,
                        "tid": event.data["timer_id"],
                        "due": float(event.data["due_at"]),
                    },
                )
            elif event.type in _CLEARS_TIMER and "timer_id" in event.data:
                _DELETE_TIMER.execute(conn, {"wid": workflow_id, "tid": event.data["timer_id"]})

    # -- reads ----------------------------------------------------------------------------------
    async def read(self, workflow_id: str) -> list[LogEvent]:
        rows = await self.db.read(lambda c: c.execute(_EVENTS_OF, {"wid": workflow_id}).all())
        return [
            LogEvent(workflow_id, seq, EventType(kind), node, data, at)
            for seq, kind, node, data, at in rows
        ]

    async def record(self, workflow_id: str) -> WorkflowRecord | None:
        row = await self.db.read(lambda c: c.execute(_RECORD_BY_ID, {"wid": workflow_id}).first())
        return _record(row) if row is not None else None

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
        where = [runs.c.scope == scope]
        if context_id is not None:
            where.append(runs.c.context_id == context_id)
        if status is not None:
            where.append(runs.c.status == status.value)
        if updated_after is not None:
            where.append(runs.c.updated_at >= updated_after)
        count = select(func.count()).select_from(runs).where(*where)
        page: Select[Any] = select(*_RECORD).where(*where)
        if after is not None:
            page = page.where(
                (runs.c.updated_at < after[0])
                | ((runs.c.updated_at == after[0]) & (runs.c.id < after[1]))
            )
        page = page.order_by(runs.c.updated_at.desc(), runs.c.id.desc()).limit(limit)

        def run(conn: Connection) -> tuple[list[WorkflowRecord], int]:
            total = int(conn.execute(count).scalar_one())
            return [_record(r) for r in conn.execute(page)], total

        return await self.db.read(run, snapshot=True)

    async def next_timer(self) -> Timer | None:
        row = await self.db.read(lambda c: c.execute(_NEXT_TIMER.limit(1)).first())
        return Timer(row[0], row[1], float(row[2])) if row is not None else None

    async def due_timers(self, now: float, limit: int) -> list[Timer]:
        rows = await self.db.read(
            lambda c: c.execute(_DUE_TIMERS, {"now": now, "limit": limit}).all()
        )
        return [Timer(r[0], r[1], float(r[2])) for r in rows]

    async def purge_closed(self, older_than_s: float, limit: int) -> int:
        def run(txn: Txn) -> int:
            old = (
                select(runs.c.id)
                .where(runs.c.closed == true(), runs.c.updated_at < txn.now - older_than_s)
                .limit(limit)
            )
            ids = [r[0] for r in txn.conn.execute(old)]
            if ids:
                txn.conn.execute(delete(events).where(events.c.workflow_id.in_(ids)))
                txn.conn.execute(delete(timers).where(timers.c.workflow_id.in_(ids)))
                txn.conn.execute(delete(runs).where(runs.c.id.in_(ids)))
            return len(ids)

        return await self.db.write(run)

    # -- leases ---------------------------------------------------------------------------------
    async def heartbeat(self, owner: str, ttl_s: float) -> None:
        await self.db.write(
            lambda t: t.conn.execute(self._heartbeat, {"owner": owner, "ttl": ttl_s})
        )

    async def drop_owner(self, owner: str) -> None:
        await self.db.write(lambda t: t.conn.execute(_DROP_OWNER, {"owner": owner}))

    async def acquire(self, workflow_id: str, owner: str) -> bool:
        def run(txn: Txn) -> bool:
            return (
                txn.conn.execute(self._acquire, {"wid": workflow_id, "owner": owner}).rowcount == 1
            )

        return await self.db.write(run)

    async def release(self, workflow_id: str, owner: str) -> None:
        await self.db.write(
            lambda t: t.conn.execute(_RELEASE, {"wid": workflow_id, "owner": owner})
        )

    async def claim_orphans(self, owner: str, graph_keys: Sequence[str], limit: int) -> list[str]:
        keys = list(graph_keys)
        if not keys:
            return []

        def run(txn: Txn) -> list[str]:
            params = {"owner": owner, "keys": keys, "limit": limit}
            return [r[0] for r in txn.conn.execute(self._claim, params)]

        return await self.db.write(run)


class _Batch:
    """What the appends of one group-commit transaction share."""

    __slots__ = ("heads", "rows", "touched")

    def __init__(self) -> None:
        # workflow id -> [status, closed, version], read once for the whole batch and kept
        # current as its appends succeed
        self.heads: dict[str, list[Any]] = {}
        self.rows: list[dict[str, Any]] = []  # every event of the batch, inserted at once
        self.touched: dict[str, float] = {}  # existing workflows appended to -> updated_at


def _batch(txn: Txn) -> _Batch:
    found = txn.state.get("eventlog")
    if isinstance(found, _Batch):
        return found
    batch = txn.state["eventlog"] = _Batch()
    ids = sorted(txn.keys)
    for start in range(0, len(ids), _HEADS_CHUNK):
        chunk = ids[start : start + _HEADS_CHUNK]
        for wid, status, closed, version in _HEADS.execute(txn.conn, {"ids": chunk}).fetchall():
            batch.heads[wid] = [status, bool(closed), int(version)]

    def finish() -> None:
        if batch.rows:
            _INSERT_EVENTS.executemany(txn.conn, batch.rows)
        if batch.touched:
            _TOUCH.executemany(
                txn.conn, [{"b_id": w, "b_at": at} for w, at in batch.touched.items()]
            )

    txn.before_commit("eventlog", finish)
    return batch


def _record(row: Sequence[Any]) -> WorkflowRecord:
    version, wid, status, key, lease_owner, closed, scope, context_id, updated_at = row
    return WorkflowRecord(
        wid,
        int(version),
        Status(status),
        key,
        lease_owner,
        bool(closed),
        scope,
        context_id,
        float(updated_at),
    )
