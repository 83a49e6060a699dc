"""The event log behaves the same on SQLite and PostgreSQL where v0.1's two implementations
drifted: a timer set again moves (upsert), and leases are measured by the database's clock."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import Connection, select

from accord.runtime.workflow import open_event_log
from accord.runtime.workflow.eventlog_sql import SqlEventLog
from accord.runtime.workflow.events import EventType, NewEvent
from accord.runtime.workflow.tables import workflow_owners


@pytest.fixture
async def log(log_url: str) -> AsyncIterator[SqlEventLog]:
    opened = open_event_log(log_url)
    assert isinstance(opened, SqlEventLog)
    await opened.open()
    yield opened
    await opened.close()


def timer(due_at: float) -> NewEvent:
    return NewEvent(
        EventType.TIMER_SET, "n", {"timer_id": "t1", "interrupt_id": "i1", "due_at": due_at}
    )


async def test_a_timer_set_again_moves_its_due_time(log: SqlEventLog) -> None:
    start = NewEvent(EventType.WORKFLOW_STARTED, None, {"graph": "g", "version": "1"})
    await log.append("w", 0, [start, timer(1000.0)])
    await log.append("w", 2, [timer(2000.0)])
    due = await log.due_timers(10_000.0, 10)
    assert [(t.workflow_id, t.timer_id, t.due_at) for t in due] == [("w", "t1", 2000.0)]


async def test_leases_expire_by_the_database_clock(log: SqlEventLog) -> None:
    await log.heartbeat("owner-1", 30.0)
    db = log.db

    def read(conn: Connection) -> tuple[float, float]:
        row = conn.execute(select(workflow_owners.c.expires_at, db.clock())).one()
        return float(row[0]), float(row[1])

    expires_at, db_now = await db.read(read)
    assert 29.0 < expires_at - db_now <= 30.0
    assert abs(db_now - time.time()) < 5.0
    # A zero TTL: dead at once by that clock, so its workflows can be taken.
    start = NewEvent(EventType.WORKFLOW_STARTED, None, {"graph": "g", "version": "1"})
    await log.append("w", 0, [start], owner="owner-1")
    other = "owner-2"
    assert not await log.acquire("w", other)
    await log.heartbeat("owner-1", 0.0)
    assert await log.acquire("w", other)


async def test_retention_deletes_closed_workflows_only(log: SqlEventLog) -> None:
    start = NewEvent(EventType.WORKFLOW_STARTED, None, {"graph": "g", "version": "1"})
    done = NewEvent(EventType.WORKFLOW_FINISHED, None, {"status": "completed"})
    await log.append("closed", 0, [start, done])
    await log.append("waiting", 0, [start, timer(10_000.0)])
    # Nothing is old enough yet.
    assert await log.purge_closed(3600.0, 10) == 0
    # Everything is past a retention that ends in the future: only the closed one goes, with
    # its events; the waiting one (and its timer) stays, however old.
    assert await log.purge_closed(-60.0, 10) == 1
    assert await log.read("closed") == []
    assert await log.record("closed") is None
    assert len(await log.read("waiting")) == 2
    assert [t.workflow_id for t in await log.due_timers(20_000.0, 10)] == ["waiting"]
