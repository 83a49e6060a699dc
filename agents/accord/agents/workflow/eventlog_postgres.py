"""The event log on PostgreSQL (asyncpg), for several replicas sharing one database.

An append locks the workflow's row (`SELECT ... FOR UPDATE`), checks the expected version
and that the workflow is open, then inserts the events in one statement; the primary key
(workflow_id, seq) is the last line of defence. Orphans are claimed with
`FOR UPDATE SKIP LOCKED`, so two replicas recovering at once never take the same workflow.
Lease times use the database clock, so replicas' clocks need not agree.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import asyncpg

from accord.agents.workflow.eventlog import (
    RECORD_COLUMNS,
    EventLog,
    VersionConflictError,
    WorkflowClosedError,
    WorkflowRecord,
    listing_sql,
    record_from_row,
    started_graph_key,
)
from accord.agents.workflow.events import CLOSING, Event, EventType, NewEvent, Timer
from accord.agents.workflow.tables import SCHEMA
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.storage.migrate import upgrade

_NOW = "extract(epoch from clock_timestamp())"
_LIVE_OWNERS = f"SELECT owner FROM workflow_owners WHERE expires_at > {_NOW}"
_CLEARS_TIMER = frozenset({EventType.TIMER_FIRED, EventType.RESUMED})


class PostgresEventLog(EventLog):
    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10) -> None:
        self._url = url
        self._min_size = min_size
        self._max_size = max_size
        self._pool: Any = None

    async def open(self) -> None:
        if self._pool is not None:
            return
        await upgrade(self._url, SCHEMA)  # migrations, safe with several replicas
        try:
            self._pool = await asyncpg.create_pool(
                self._url, min_size=self._min_size, max_size=self._max_size
            )
        except (OSError, asyncpg.PostgresError):
            raise _unavailable() from None

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    def _require(self) -> Any:
        if self._pool is None:
            raise AccordError(ErrorCode.UNAVAILABLE, "the workflow event log is not open")
        return self._pool

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
    ) -> list[Event]:
        pool = self._require()
        try:
            encoded = [event.data_json() for event in events]
        except (TypeError, ValueError):
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                "workflow events must be JSON",
                {"workflow_id": workflow_id},
            ) from None
        closing = any(event.type in CLOSING for event in events)
        now = time.time()
        try:
            async with pool.acquire() as conn, conn.transaction():
                await self._check_and_mark(
                    conn,
                    workflow_id,
                    expected_version,
                    events,
                    status,
                    owner,
                    closing,
                    (scope, context_id, now),
                )
                appended = [
                    Event(workflow_id, expected_version + i, e.type, e.node, e.data, now)
                    for i, e in enumerate(events, start=1)
                ]
                await conn.execute(
                    "INSERT INTO workflow_events (workflow_id, seq, type, node, data, at) "
                    "SELECT $1, s, t, n, d::jsonb, $6 FROM unnest($2::int[], $3::text[], "
                    "$4::text[], $5::text[]) AS u(s, t, n, d)",
                    workflow_id,
                    [e.seq for e in appended],
                    [e.type.value for e in appended],
                    [e.node for e in appended],
                    encoded,
                    now,
                )
                for event in events:
                    if event.type is EventType.TIMER_SET:
                        await conn.execute(
                            "INSERT INTO workflow_timers (workflow_id, timer_id, due_at) "
                            "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                            workflow_id,
                            event.data["timer_id"],
                            float(event.data["due_at"]),
                        )
                    elif event.type in _CLEARS_TIMER and "timer_id" in event.data:
                        await conn.execute(
                            "DELETE FROM workflow_timers WHERE workflow_id = $1 AND timer_id = $2",
                            workflow_id,
                            event.data["timer_id"],
                        )
                if closing:
                    await conn.execute(
                        "DELETE FROM workflow_timers WHERE workflow_id = $1", workflow_id
                    )
        except asyncpg.UniqueViolationError:
            raise VersionConflictError(workflow_id, expected_version, None) from None
        except (OSError, asyncpg.PostgresError):
            raise _unavailable() from None
        return appended

    async def _check_and_mark(
        self,
        conn: Any,
        workflow_id: str,
        expected: int,
        events: Sequence[NewEvent],
        status: Status | None,
        owner: str | None,
        closing: bool,
        listing: tuple[str | None, str | None, float],
    ) -> None:
        if expected == 0:
            created = await conn.fetchval(
                "INSERT INTO workflow_runs (id, status, graph_key, lease_owner, closed, scope, "
                "context_id, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
                "ON CONFLICT (id) DO NOTHING RETURNING id",
                workflow_id,
                (status or Status.RUNNING).value,
                started_graph_key(events),
                owner,
                closing,
                *listing,
            )
            if created is None:
                raise VersionConflictError(workflow_id, expected, None)
            return
        row = await conn.fetchrow(
            "SELECT status, closed, (SELECT coalesce(max(seq), 0) FROM workflow_events "
            "WHERE workflow_id = $1) AS version FROM workflow_runs WHERE id = $1 FOR UPDATE",
            workflow_id,
        )
        if row is None:
            raise VersionConflictError(workflow_id, expected, None)
        if row["closed"]:
            raise WorkflowClosedError(workflow_id)
        if row["version"] != expected:
            raise VersionConflictError(workflow_id, expected, row["version"])
        new_status = status.value if status is not None else row["status"]
        await conn.execute(
            "UPDATE workflow_runs SET status = $2, closed = $3, lease_owner = CASE WHEN $4 "
            "THEN NULL ELSE lease_owner END, updated_at = $5 WHERE id = $1",
            workflow_id,
            new_status,
            closing,
            new_status != Status.RUNNING.value,
            listing[2],
        )

    async def read(self, workflow_id: str) -> list[Event]:
        rows = await self._fetch(
            "SELECT seq, type, node, data::text AS data, at FROM workflow_events "
            "WHERE workflow_id = $1 ORDER BY seq",
            workflow_id,
        )
        return [
            Event(
                workflow_id,
                r["seq"],
                EventType(r["type"]),
                r["node"],
                json.loads(r["data"]),
                r["at"],
            )
            for r in rows
        ]

    async def record(self, workflow_id: str) -> WorkflowRecord | None:
        rows = await self._fetch(
            f"SELECT {RECORD_COLUMNS} FROM workflow_runs r WHERE r.id = $1", workflow_id
        )
        return record_from_row(tuple(rows[0])) if rows else None

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
        count_sql, count_args, page_sql, page_args = listing_sql(
            lambda n: f"${n}", scope, context_id, status, updated_after, after, limit
        )
        pool = self._require()
        try:
            async with pool.acquire() as conn:
                total = await conn.fetchval(count_sql, *count_args)
                rows = await conn.fetch(page_sql, *page_args)
        except (OSError, asyncpg.PostgresError):
            raise _unavailable() from None
        return [record_from_row(tuple(r)) for r in rows], int(total)

    async def heartbeat(self, owner: str, ttl_s: float) -> None:
        await self._fetch(
            f"INSERT INTO workflow_owners (owner, expires_at) VALUES ($1, {_NOW} + $2) "
            "ON CONFLICT (owner) DO UPDATE SET expires_at = excluded.expires_at",
            owner,
            ttl_s,
        )

    async def drop_owner(self, owner: str) -> None:
        await self._fetch("DELETE FROM workflow_owners WHERE owner = $1", owner)

    async def acquire(self, workflow_id: str, owner: str) -> bool:
        rows = await self._fetch(
            "UPDATE workflow_runs SET lease_owner = $1 WHERE id = $2 AND NOT closed AND "
            f"(lease_owner IS NULL OR lease_owner = $1 OR lease_owner NOT IN ({_LIVE_OWNERS})) "
            "RETURNING id",
            owner,
            workflow_id,
        )
        return bool(rows)

    async def release(self, workflow_id: str, owner: str) -> None:
        await self._fetch(
            "UPDATE workflow_runs SET lease_owner = NULL WHERE id = $1 AND lease_owner = $2",
            workflow_id,
            owner,
        )

    async def claim_orphans(self, owner: str, graph_keys: Sequence[str], limit: int) -> list[str]:
        if not graph_keys:
            return []
        rows = await self._fetch(
            "UPDATE workflow_runs SET lease_owner = $1 WHERE id IN ("
            "SELECT id FROM workflow_runs WHERE status = $2 AND NOT closed "
            "AND graph_key = ANY($3::text[]) "
            f"AND (lease_owner IS NULL OR lease_owner NOT IN ({_LIVE_OWNERS})) "
            "LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING id",
            owner,
            Status.RUNNING.value,
            list(graph_keys),
            limit,
        )
        return [r["id"] for r in rows]

    async def next_timer(self) -> Timer | None:
        rows = await self._fetch(
            "SELECT workflow_id, timer_id, due_at FROM workflow_timers ORDER BY due_at LIMIT 1"
        )
        return (
            Timer(rows[0]["workflow_id"], rows[0]["timer_id"], rows[0]["due_at"]) if rows else None
        )

    async def due_timers(self, now: float, limit: int) -> list[Timer]:
        rows = await self._fetch(
            "SELECT workflow_id, timer_id, due_at FROM workflow_timers WHERE due_at <= $1 "
            "ORDER BY due_at LIMIT $2",
            now,
            limit,
        )
        return [Timer(r["workflow_id"], r["timer_id"], r["due_at"]) for r in rows]

    async def _fetch(self, query: str, *args: Any) -> list[Any]:
        pool = self._require()
        try:
            return list(await pool.fetch(query, *args))
        except (OSError, asyncpg.PostgresError):
            raise _unavailable() from None


def _unavailable() -> AccordError:
    return AccordError(ErrorCode.UNAVAILABLE, "the workflow event log is unavailable")
