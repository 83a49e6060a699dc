"""EventLog.list_workflows on SQLite and PostgreSQL: owner-scoped, newest append first, keyset
pages, filters and the total count; the listing columns of WorkflowRecord."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from accord.contracts.status import Status
from accord.runtime.workflow import open_event_log
from accord.runtime.workflow.eventlog import EventLog
from accord.runtime.workflow.events import EventType, NewEvent


@pytest.fixture
async def log(log_url: str) -> AsyncIterator[EventLog]:
    opened = open_event_log(log_url)
    await opened.open()
    yield opened
    await opened.close()


def started() -> list[NewEvent]:
    return [NewEvent(EventType.WORKFLOW_STARTED, None, {"graph": "g", "version": "1"})]


async def create(log: EventLog, wid: str, scope: str | None, context: str | None = None) -> None:
    await log.append(wid, 0, started(), owner="me", scope=scope, context_id=context)
    await asyncio.sleep(0.002)  # distinct updated_at on a coarse clock


async def test_a_record_carries_its_listing_columns(log: EventLog) -> None:
    before = time.time()
    await log.append("w", 0, started(), scope="app/C-01", context_id="ctx-1")
    record = await log.record("w")
    assert record is not None
    assert (record.scope, record.context_id) == ("app/C-01", "ctx-1")
    assert before <= record.updated_at <= time.time()
    first = record.updated_at
    await asyncio.sleep(0.01)
    await log.append("w", 1, [NewEvent(EventType.NODE_STARTED, "a", {"attempt": 1})])
    again = await log.record("w")
    assert again is not None
    assert again.updated_at > first  # every append moves it
    assert (again.scope, again.context_id) == ("app/C-01", "ctx-1")
    assert again.version == 2


async def test_listing_is_scoped_newest_first_and_paged(log: EventLog) -> None:
    for i in range(5):
        await create(log, f"w{i}", "app/C-01", "ctx-a" if i % 2 else "ctx-b")
    await create(log, "other", "app/C-02")
    await create(log, "unscoped", None)

    records, total = await log.list_workflows("app/C-01", limit=10)
    assert total == 5
    assert [r.workflow_id for r in records] == ["w4", "w3", "w2", "w1", "w0"]

    # An append moves a workflow to the top.
    await log.append("w1", 1, [NewEvent(EventType.NODE_STARTED, "a", {"attempt": 1})])
    records, _ = await log.list_workflows("app/C-01", limit=10)
    assert [r.workflow_id for r in records] == ["w1", "w4", "w3", "w2", "w0"]

    # Keyset pages of two, through the whole list, with the total on every page.
    seen: list[str] = []
    after: tuple[float, str] | None = None
    while True:
        page, total = await log.list_workflows("app/C-01", after=after, limit=2)
        assert total == 5
        if not page:
            break
        seen += [r.workflow_id for r in page]
        after = (page[-1].updated_at, page[-1].workflow_id)
    assert seen == ["w1", "w4", "w3", "w2", "w0"]

    nobody, total = await log.list_workflows("app/C-03", limit=10)
    assert (nobody, total) == ([], 0)


async def test_listing_filters(log: EventLog) -> None:
    for i in range(4):
        await create(log, f"w{i}", "app/C-01", "ctx-a" if i < 2 else "ctx-b")
    await log.append(
        "w0",
        1,
        [NewEvent(EventType.WORKFLOW_FINISHED, None, {"status": "completed"})],
        status=Status.COMPLETED,
    )
    by_context, total = await log.list_workflows("app/C-01", context_id="ctx-b", limit=10)
    assert total == 2
    assert {r.workflow_id for r in by_context} == {"w2", "w3"}

    done, total = await log.list_workflows("app/C-01", status=Status.COMPLETED, limit=10)
    assert [r.workflow_id for r in done] == ["w0"]
    assert total == 1
    assert done[0].closed

    w2 = await log.record("w2")
    assert w2 is not None
    recent, total = await log.list_workflows("app/C-01", updated_after=w2.updated_at, limit=10)
    assert {r.workflow_id for r in recent} == {"w0", "w2", "w3"}  # at or after; w0 appended last
    assert total == 3

    both, total = await log.list_workflows(
        "app/C-01", context_id="ctx-a", status=Status.RUNNING, limit=10
    )
    assert [r.workflow_id for r in both] == ["w1"]
    assert total == 1
