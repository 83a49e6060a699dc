"""AccordTaskStore on SQLite and PostgreSQL: owner scoping, listing, deletion, recovery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.types import ListTasksRequest, Task, TaskState, TaskStatus

from accord.contracts.errors import ErrorCode
from accord.protocol.a2a.server.store import RESTART_MESSAGE, AccordTaskStore
from accord.protocol.a2a.server.store_tables import table_name
from accord.protocol.a2a.wire import read_contract_state

BASE = datetime(2026, 1, 1, tzinfo=UTC)


class Owner(User):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


def ctx(owner: str) -> ServerCallContext:
    return ServerCallContext(user=Owner(owner))


def task(
    task_id: str, state: str = "TASK_STATE_COMPLETED", *, minute: int = 0, context_id: str = "c1"
) -> Task:
    status = TaskStatus(state=state)
    status.timestamp.FromDatetime(BASE + timedelta(minutes=minute))
    return Task(id=task_id, context_id=context_id, status=status)


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AccordTaskStore]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'tasks.db'}"
    else:
        url = str(request.getfixturevalue("postgres_url"))
    s = AccordTaskStore(url, table=table_name("unit-test"))
    await s.open()
    yield s
    await s.close()


async def test_tasks_are_owner_scoped(store: AccordTaskStore) -> None:
    await store.save(task("t1"), ctx("accord/A"))
    assert (await store.get("t1", ctx("accord/A"))) == task("t1")
    assert await store.get("t1", ctx("accord/B")) is None
    await store.delete("t1", ctx("accord/B"))  # not B's to delete
    assert await store.get("t1", ctx("accord/A")) is not None
    await store.delete("t1", ctx("accord/A"))
    assert await store.get("t1", ctx("accord/A")) is None


async def test_concurrent_saves_all_land(store: AccordTaskStore) -> None:
    await asyncio.gather(*(store.save(task(f"t{i}", minute=i), ctx("o")) for i in range(200)))
    await asyncio.gather(
        *(
            store.save(task(f"t{i}", "TASK_STATE_FAILED", minute=i), ctx("o"))
            for i in range(0, 200, 2)
        )
    )
    page = await store.list(ListTasksRequest(page_size=100), ctx("o"))
    assert page.total_size == 200
    failed = await store.list(
        ListTasksRequest(status=TaskState.TASK_STATE_FAILED, page_size=100), ctx("o")
    )
    assert failed.total_size == 100
    assert {t.id for t in failed.tasks} == {f"t{i}" for i in range(0, 200, 2)}


async def test_listing_pages_newest_first_with_filters(store: AccordTaskStore) -> None:
    for i in range(7):
        await store.save(
            task(f"t{i}", minute=i, context_id="even" if i % 2 == 0 else "odd"), ctx("o")
        )
    await store.save(task("other", minute=99), ctx("someone-else"))
    seen: list[str] = []
    token = ""
    while True:
        page = await store.list(ListTasksRequest(page_size=3, page_token=token), ctx("o"))
        assert page.total_size == 7
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == [f"t{i}" for i in reversed(range(7))]
    odd = await store.list(ListTasksRequest(context_id="odd"), ctx("o"))
    assert [t.id for t in odd.tasks] == ["t5", "t3", "t1"]
    request = ListTasksRequest()
    request.status_timestamp_after.FromDatetime(BASE + timedelta(minutes=5))
    recent = await store.list(request, ctx("o"))
    assert [t.id for t in recent.tasks] == ["t6", "t5"]


async def test_recover_fails_unfinished_tasks_and_keeps_waiting_ones(
    store: AccordTaskStore,
) -> None:
    await store.save(task("queued", "TASK_STATE_SUBMITTED"), ctx("o"))
    await store.save(task("running", "TASK_STATE_WORKING"), ctx("o"))
    await store.save(task("waiting", "TASK_STATE_INPUT_REQUIRED"), ctx("o"))
    await store.save(task("done", "TASK_STATE_COMPLETED"), ctx("o"))
    assert await store.recover() == 0  # its own tasks: this process is alive
    await store.close()  # the process goes away (its heartbeat with it)
    restarted = AccordTaskStore(store.url, table=store.table)
    await restarted.open()
    try:
        assert await restarted.recover() == 2
        for task_id in ("queued", "running"):
            found = await restarted.get(task_id, ctx("o"))
            assert found is not None
            state, error = read_contract_state(found.status)
            assert state.status.value == "failed"
            assert error is not None
            assert error.code is ErrorCode.UNAVAILABLE
            assert error.message == RESTART_MESSAGE
        waiting = await restarted.get("waiting", ctx("o"))
        assert waiting is not None
        assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert await restarted.recover() == 0
    finally:
        await restarted.close()


@pytest.mark.postgres
async def test_a_replica_fails_only_the_tasks_of_replicas_whose_heartbeat_expired(
    postgres_url: str,
) -> None:
    """Two replicas on one database: B starting leaves A's running task alone while A beats;
    once A stops beating (killed: no clean close), B's next sweep fails it."""
    table = table_name("replica-test")
    a = AccordTaskStore(postgres_url, table=table, worker_ttl_s=1.0)
    b = AccordTaskStore(postgres_url, table=table, worker_ttl_s=1.0)
    await a.open()
    await b.open()
    try:
        await a.heartbeat()
        await a.save(task("a-running", "TASK_STATE_WORKING"), ctx("o"))
        await b.heartbeat()
        assert await b.recover() == 0  # A is alive
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        failed = 0
        while not failed:  # A beats no more: its heartbeat expires by the database's clock
            assert loop.time() < deadline, "A's task was never recovered"
            await asyncio.sleep(0.2)  # polling the sweep, bounded by the deadline
            failed = await b.recover()
        assert failed == 1
        found = await b.get("a-running", ctx("o"))
        assert found is not None
        state, error = read_contract_state(found.status)
        assert state.status.value == "failed"
        assert error is not None
        assert error.code is ErrorCode.UNAVAILABLE
    finally:
        await b.close()
        # A was "killed": its connections go, its heartbeat row stays (expired).
        await (await a.open()).close()


def test_table_names_are_per_service_and_safe() -> None:
    assert table_name("policy") == "a2a_tasks_policy"
    assert table_name("risk-check") == "a2a_tasks_risk_check"
    with pytest.raises(ValueError, match="table"):
        AccordTaskStore("sqlite:///x.db", table="x; drop table y")


async def test_a_row_that_cannot_be_rendered_is_skipped_not_fatal(store: AccordTaskStore) -> None:
    # An older version could store a DataPart holding NaN; the gate refuses it now, but such a
    # row must never fail every later listing of its owner.
    from a2a.types import Artifact, Part
    from google.protobuf import struct_pb2

    broken = task("t-nan", minute=2)
    value = struct_pb2.Value(number_value=float("nan"))
    broken.artifacts.append(Artifact(artifact_id="a", parts=[Part(data=value)]))
    await store.save(broken, ctx("alice"))
    await store.save(task("t-ok", minute=1), ctx("alice"))
    page = await store.list(ListTasksRequest(), ctx("alice"))
    assert [t.id for t in page.tasks] == ["t-ok"]


async def test_timestamps_beyond_int64_nanoseconds_match_nothing(store: AccordTaskStore) -> None:
    await store.save(task("t-1"), ctx("alice"))
    request = ListTasksRequest()
    request.status_timestamp_after.FromDatetime(datetime(2300, 1, 1, tzinfo=UTC))
    assert list((await store.list(request, ctx("alice"))).tasks) == []


async def test_finished_tasks_past_retention_are_deleted_unfinished_kept(
    store: AccordTaskStore,
) -> None:
    store.retention_s = 3600.0
    await store.save(task("old-done", minute=0), ctx("alice"))
    await store.save(task("old-waiting", "TASK_STATE_INPUT_REQUIRED", minute=1), ctx("alice"))
    await store.save(task("old-working", "TASK_STATE_WORKING", minute=2), ctx("alice"))
    recent = Task(id="new-done", context_id="c1", status=TaskStatus(state="TASK_STATE_COMPLETED"))
    recent.status.timestamp.FromDatetime(datetime.now(UTC))
    await store.save(recent, ctx("alice"))
    assert await store.purge_finished() == 1
    assert await store.get("old-done", ctx("alice")) is None
    for kept in ("old-waiting", "old-working", "new-done"):
        assert await store.get(kept, ctx("alice")) is not None


async def test_history_kept_per_task_is_capped_to_the_newest(store: AccordTaskStore) -> None:
    from a2a.types import Message, Part

    store.history_limit = 5
    long = task("chatty")
    for i in range(12):
        long.history.append(Message(message_id=f"m{i}", parts=[Part(text=str(i))]))
    await store.save(long, ctx("alice"))
    assert len(long.history) == 12  # the caller's object is left alone
    kept = await store.get("chatty", ctx("alice"))
    assert kept is not None
    assert [m.message_id for m in kept.history] == [f"m{i}" for i in range(7, 12)]
