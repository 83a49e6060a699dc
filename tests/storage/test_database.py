"""The storage layer's writer on SQLite and PostgreSQL: group commit, a failing call fails
alone, a broken batch commits nothing, another process's write lock is waited out without
blocking the loop (SQLite, by error code), the database's clock."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, Text, select

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.storage.database import Database, Txn
from accord.protocol.storage.sqlite import is_busy

metadata = MetaData()
notes = Table("notes", metadata, Column("id", Integer, primary_key=True), Column("body", Text))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'notes.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    database = Database(url)
    await database.open()
    await database.write(lambda t: metadata.create_all(t.conn))
    yield database
    await database.close()


def add(i: int) -> Callable[[Txn], int]:
    def run(txn: Txn) -> int:
        txn.conn.execute(notes.insert().values(id=i, body=f"note {i}"))
        return i

    return run


async def count(db: Database) -> int:
    return len(await db.read(lambda c: c.execute(select(notes.c.id)).all()))


async def test_concurrent_writes_share_one_commit(db: Database) -> None:
    await db.write(add(0))  # a lone write commits at once
    before = db.commits
    got = await asyncio.gather(*(db.write(add(i)) for i in range(1, 17)))
    assert got == list(range(1, 17))
    assert await count(db) == 17
    if db.is_sqlite:
        assert db.commits - before <= 2  # sixteen writers of one turn: one batch (or two)


async def test_an_accord_error_fails_its_call_alone(db: Database) -> None:
    def refuse(txn: Txn) -> None:
        raise AccordError(ErrorCode.NOT_FOUND, "no such thing")

    results = await asyncio.gather(
        db.write(add(1)),
        db.write(refuse),
        db.write(add(2)),
        return_exceptions=True,
    )
    assert results[0] == 1
    assert results[2] == 2
    assert isinstance(results[1], AccordError)
    assert results[1].code is ErrorCode.NOT_FOUND
    assert await count(db) == 2


async def test_any_other_error_rolls_the_whole_batch_back(db: Database) -> None:
    def broken(txn: Txn) -> None:
        raise ZeroDivisionError("a bug")

    def nothing(txn: Txn) -> None:
        return None

    # On SQLite a lone first write commits at once; the writes after it form one batch.
    results = await asyncio.gather(
        db.write(nothing),
        db.write(add(1)),
        db.write(broken),
        db.write(add(2)),
        return_exceptions=True,
    )
    assert all(isinstance(r, ZeroDivisionError) for r in results[1:]), results
    assert await count(db) == 0
    assert await db.write(add(3)) == 3  # the writer goes on


async def test_a_database_error_is_unavailable_for_every_call(db: Database) -> None:
    await db.write(add(1))
    results = await asyncio.gather(
        db.write(add(2)),
        db.write(add(1)),
        db.write(add(3)),
        return_exceptions=True,
    )
    # id 1 again: the database refuses the batch it is in, and every call of it hears so.
    assert isinstance(results[1], AccordError)
    assert results[1].code is ErrorCode.UNAVAILABLE
    assert isinstance(results[2], AccordError)
    assert await count(db) in (1, 2)  # 2 if the first write committed alone (SQLite)


async def test_the_database_clock(db: Database) -> None:
    now = await db.read(lambda c: c.execute(select(db.clock())).scalar_one())
    assert abs(float(now) - time.time()) < 5.0


async def test_sqlite_waits_out_another_process_lock_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    path = tmp_path / "locked.db"
    db = Database(f"sqlite:///{path}", lock_wait_s=10.0)
    await db.open()
    await db.write(lambda t: metadata.create_all(t.conn))
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
    try:
        pending = asyncio.ensure_future(db.write(add(1)))
        ticks = 0
        while ticks < 20:  # the loop keeps turning meanwhile
            await asyncio.sleep(0.005)
            ticks += 1
        assert not pending.done()
        with pytest.raises(sqlite3.OperationalError) as raised:
            other.execute("BEGIN IMMEDIATE")  # nested: a real error, but not "busy"
        assert not is_busy(raised.value)
    finally:
        other.execute("COMMIT")
        other.close()
    assert await asyncio.wait_for(pending, 10) == 1
    await db.close()


def test_busy_is_told_by_the_error_code_not_the_message(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    one = sqlite3.connect(path, isolation_level=None, timeout=0)
    two = sqlite3.connect(path, isolation_level=None, timeout=0)
    one.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError) as raised:
        two.execute("BEGIN IMMEDIATE")
    one.execute("COMMIT")
    assert is_busy(raised.value)
    assert not is_busy(sqlite3.OperationalError("database is locked"))  # no code: not busy
    one.close()
    two.close()
