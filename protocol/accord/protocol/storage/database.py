"""One store's database: reads, and writes by group commit, on SQLite or PostgreSQL.

Every store (the workflow event log, the A2A task store, the tool servers' tables) writes
through :meth:`Database.write`: a write is a function of a :class:`Txn`; the writes queued while
the previous batch committed (SQLite: during one turn of the event loop) run in ONE transaction,
so sixteen concurrent requests cost one commit, not sixteen.

- **SQLite** (the stdlib driver, one connection): the batch runs on the event loop itself,
  opened with ``BEGIN IMMEDIATE``. WAL with ``synchronous=NORMAL`` makes a commit a write to the
  WAL file without fsync (durable across a process crash, maybe not a power cut: SQLite's usual
  trade), tens of microseconds: less than one hand-off to a driver thread, and a writer thread
  here made the workflow runtime 3-5x slower (two hand-offs per call plus GIL convoys). The
  fsync that remains, the checkpoint, runs in a thread (:mod:`.checkpoint`). The loop never
  waits on another process's write lock: a busy database (detected by SQLite's error code) is
  retried a few milliseconds later, for up to ``lock_wait_s``. A lone writer commits at once
  instead of a turn later (see ``_count_turn``).
- **PostgreSQL** (asyncpg through SQLAlchemy): one flusher task runs each batch in one
  transaction; a deadlock or serialization failure between replicas re-runs the batch.

The rules for a write function: it runs synchronously on a SQLAlchemy ``Connection``
(``txn.conn``) and may run again if its batch is retried; an :class:`AccordError` it raises
fails that call alone, so it must raise before it writes anything; any other error rolls the
batch back and fails every call in it. ``txn.before_commit(name, fn)`` runs ``fn`` once per
batch just before the commit, so a store can write the rows of all its calls in one statement.
Reads run on the loop's connection (SQLite: WAL readers never wait for the writer) or a pooled
one.

Both dialects get the same statements (SQLAlchemy Core), the same upsert semantics
(``ON CONFLICT``), and the database's own clock (:meth:`Database.clock`) where processes must
agree on time.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from sqlalchemy import Connection, Double, Table, literal_column, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.sql.elements import ColumnElement

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.storage.checkpoint import Checkpointer
from accord.protocol.storage.migrate import upgrade_on
from accord.protocol.storage.schema import Schema
from accord.protocol.storage.sqlite import is_busy, sqlite_engine
from accord.protocol.storage.urls import parse_url

logger = logging.getLogger(__name__)
T = TypeVar("T")

_RETRY_SQLSTATES: Final = frozenset({"40001", "40P01"})  # serialization failure, deadlock
_RETRY_BATCH: Final = 3
_BUSY_RETRY_S: Final = 0.002


class Txn:
    """One group-commit transaction: what the writes of a batch share."""

    __slots__ = ("_finish", "conn", "keys", "now", "state")

    def __init__(self, conn: Connection, now: float, keys: frozenset[str]) -> None:
        self.conn = conn
        self.now = now  # wall clock when the batch began (seconds since the epoch)
        self.keys = keys  # the keys the batch's writes were queued with
        self.state: dict[str, Any] = {}  # per-batch scratch of the stores
        self._finish: dict[str, Callable[[], None]] = {}

    def before_commit(self, name: str, fn: Callable[[], None]) -> None:
        """Run ``fn`` once, after every write of the batch and before the commit."""
        self._finish.setdefault(name, fn)

    def finish(self) -> None:
        """Run the before-commit writes, once each, in the order they were registered."""
        for fn in self._finish.values():
            fn()


@dataclass(slots=True)
class _Call:
    fn: Callable[[Txn], Any]
    future: asyncio.Future[Any]
    key: str | None


class Database:
    def __init__(
        self,
        url: str,
        *,
        unavailable: str = "the database is unavailable",
        checkpoint_every: int = 256,
        lock_wait_s: float = 10.0,
        pool_size: int = 10,
    ) -> None:
        self.url = parse_url(url)
        self._unavailable_message = unavailable
        self._checkpoint_every = checkpoint_every
        self._lock_wait_s = lock_wait_s
        self._pool_size = pool_size
        self._conn: Connection | None = None  # SQLite: the loop's connection
        self._raw: sqlite3.Connection | None = None  # ... and its driver connection
        self._engine: AsyncEngine | None = None  # PostgreSQL
        self._checkpointer: Checkpointer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[_Call] = []
        self._flush_scheduled = False
        self._flusher: asyncio.Task[None] | None = None
        self._busy_since: float | None = None
        self._drained: asyncio.Future[None] | None = None
        self._commits = 0
        self._turn_writes = 0  # writes since the turn of the loop began (SQLite)
        self._turn_counted = False
        self._concurrent = False  # the last turn had several writers: batch the next ones

    @property
    def dialect(self) -> str:
        return self.url.dialect

    @property
    def is_sqlite(self) -> bool:
        return self.url.is_sqlite

    @property
    def commits(self) -> int:
        """Group-commit transactions committed so far (SQLite): a figure for tests and stats."""
        return self._commits

    @property
    def is_open(self) -> bool:
        return self._conn is not None or self._engine is not None

    # -- lifecycle ----------------------------------------------------------------------------
    async def open(self, schema: Schema | None = None) -> None:
        """Connect, after upgrading ``schema`` to its head revision (docs/storage.md)."""
        if self.is_open:
            return
        self._loop = asyncio.get_running_loop()
        try:
            if self.url.sqlite_path is not None:
                # Opening, WAL recovery and migrations may touch the disk: off the loop.
                self._conn = await asyncio.to_thread(self._connect_sqlite, schema)
                raw = self._conn.connection.driver_connection
                assert isinstance(raw, sqlite3.Connection)
                self._raw = raw
                if self.url.sqlite_path != ":memory:":
                    self._checkpointer = Checkpointer(self.url.sqlite_path)
                return
            # pool_pre_ping: a pooled connection is tested as it is checked out, so after the
            # database restarted (or failed over) the first request finds a fresh connection,
            # not a dead one (docs/restarts.md "PostgreSQL restarted").
            engine = create_async_engine(
                self.url.driver(),
                pool_size=self._pool_size,
                max_overflow=2 * self._pool_size,
                pool_pre_ping=True,
            )
            try:
                if schema is not None:
                    async with engine.connect() as aconn:
                        await aconn.run_sync(upgrade_on, schema)
            except BaseException:
                await engine.dispose()
                raise
            self._engine = engine
        except (OSError, sqlite3.Error, SQLAlchemyError) as exc:
            raise self._unavailable() from exc

    def _connect_sqlite(self, schema: Schema | None) -> Connection:
        assert self.url.sqlite_path is not None
        engine = sqlite_engine(self.url.sqlite_path, busy_timeout_ms=30_000)
        conn = engine.connect()
        try:
            if schema is not None:
                upgrade_on(conn, schema)  # may wait for another process's migration
            raw = conn.connection.driver_connection
            assert isinstance(raw, sqlite3.Connection)
            # From now on the loop never waits on a lock (it retries) nor checkpoints.
            raw.execute("PRAGMA busy_timeout=0")
            raw.execute("PRAGMA wal_autocheckpoint=0")
        except BaseException:
            conn.close()
            raise
        # SQLAlchemy must not BEGIN on this connection: the writer issues BEGIN IMMEDIATE.
        return conn.execution_options(accord_begin=False)

    async def close(self) -> None:
        """Close after the writes already queued have committed."""
        if not self.is_open:
            return
        if self._pending or self._flush_scheduled:
            assert self._loop is not None
            self._drained = self._loop.create_future()
            await self._drained
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
            self._flusher = None
        if self._checkpointer is not None:
            await asyncio.to_thread(self._checkpointer.stop)
            self._checkpointer = None
        if self._conn is not None:
            self._conn.close()
            self._conn.engine.dispose()
            self._conn = self._raw = None
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None

    # -- statements ---------------------------------------------------------------------------
    def insert(self, table: Table) -> sqlite.Insert | postgresql.Insert:
        """INSERT of this dialect, with ``on_conflict_do_update`` / ``on_conflict_do_nothing``
        (the same ON CONFLICT semantics on SQLite and PostgreSQL)."""
        if self.is_sqlite:
            return sqlite.insert(table)
        return postgresql.insert(table)

    def clock(self) -> ColumnElement[float]:
        """The database's clock, in seconds since the epoch: what leases are measured by, so
        that processes (replicas) whose clocks disagree still agree on who is alive."""
        if self.is_sqlite:
            return literal_column("((julianday('now') - 2440587.5) * 86400.0)", Double())
        return literal_column("extract(epoch from clock_timestamp())", Double())

    # -- reads --------------------------------------------------------------------------------
    async def read(self, fn: Callable[[Connection], T], *, snapshot: bool = False) -> T:
        """Run ``fn`` on a connection: each statement sees the latest commit, or, with
        ``snapshot``, every statement sees the same one."""
        if self._engine is not None:
            try:
                async with self._engine.connect() as aconn:
                    if snapshot:  # one snapshot for every statement of the transaction
                        await aconn.execution_options(isolation_level="REPEATABLE READ")
                    return await aconn.run_sync(fn)
            except (OSError, SQLAlchemyError) as exc:
                raise self._unavailable() from exc
        started: float | None = None
        while True:
            conn, raw = self._sqlite()
            try:
                if snapshot:
                    raw.execute("BEGIN")
                try:
                    return fn(conn)
                finally:
                    if raw.in_transaction:
                        raw.execute("COMMIT")
                    conn.rollback()  # SQLAlchemy's bookkeeping: the driver has no transaction
            except (sqlite3.Error, SQLAlchemyError) as exc:
                if not is_busy(exc):
                    raise self._unavailable() from exc
            now = time.monotonic()
            started = started if started is not None else now
            if now - started > self._lock_wait_s:
                raise self._unavailable()
            await asyncio.sleep(_BUSY_RETRY_S)

    async def ping(self) -> bool:
        await self.read(lambda conn: conn.execute(text("SELECT 1")).scalar_one())
        return True

    # -- writes -------------------------------------------------------------------------------
    async def write(self, fn: Callable[[Txn], T], *, key: str | None = None) -> T:
        """Run ``fn`` in the next group-commit transaction; its result once committed.

        ``key`` (e.g. a workflow id) is collected into ``txn.keys`` for the whole batch.
        """
        if not self.is_open:
            raise self._unavailable()
        assert self._loop is not None
        future: asyncio.Future[T] = self._loop.create_future()
        self._pending.append(_Call(fn, future, key))
        if self.is_sqlite:
            self._count_turn()
            if not self._flush_scheduled:
                self._flush_scheduled = True
                if self._concurrent or self._turn_writes > 1:
                    self._loop.call_soon(self._flush_sqlite)  # the others join this batch
                else:
                    self._flush_sqlite()  # a lone writer: commit now, the await will not wait
        elif self._flusher is None or self._flusher.done():
            self._flusher = self._loop.create_task(self._flush_postgres())
        return await future

    def _count_turn(self) -> None:
        """Learn whether writers come alone or together, from the turn of the loop before.

        A batch formed by deferring the flush to the next turn costs a lone writer two turns of
        the loop per write (the flush, then its wake-up): one workflow at a time ran at a third
        of its speed. So a write commits at once unless this turn or the one before saw another
        write, and then waits for the others of its turn. (Without reading the loop's private queue:
        the old way to know whether anything else was about to run.)
        """
        self._turn_writes += 1
        if not self._turn_counted:
            self._turn_counted = True
            assert self._loop is not None
            self._loop.call_soon(self._end_turn)

    def _end_turn(self) -> None:
        self._concurrent = self._turn_writes > 1
        self._turn_writes = 0
        self._turn_counted = False

    def _run_batch(self, conn: Connection, batch: list[_Call]) -> list[tuple[Any, Any]]:
        txn = Txn(conn, time.time(), frozenset(c.key for c in batch if c.key is not None))
        results: list[tuple[Any, Any]] = []
        for call in batch:
            try:
                results.append((call.fn(txn), None))
            except AccordError as error:  # raised before the call wrote anything
                results.append((None, error))
        txn.finish()
        return results

    def _flush_sqlite(self) -> None:
        batch, self._pending = self._pending, []
        if self._conn is None or self._raw is None:
            self._flush_scheduled = False
            _fail(batch, self._unavailable())
            self._after_flush()
            return
        conn, raw = self._conn, self._raw
        try:
            raw.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            if is_busy(exc) and self._retry_later(batch):
                return
            self._flush_scheduled = False
            _fail(batch, self._unavailable())
            self._after_flush()
            return
        self._busy_since = None
        try:
            results = self._run_batch(conn, batch)
            raw.execute("COMMIT")
            conn.commit()  # SQLAlchemy's bookkeeping: the driver's transaction just ended
        except BaseException as exc:
            if raw.in_transaction:
                raw.execute("ROLLBACK")
            conn.rollback()
            self._flush_scheduled = False
            _fail(batch, self._batch_error(exc, len(batch)))
            self._after_flush()
            return
        self._flush_scheduled = False
        _resolve(batch, results)
        self._commits += 1
        if self._checkpointer is not None and self._commits % self._checkpoint_every == 0:
            self._checkpointer.nudge()
        self._after_flush()

    def _after_flush(self) -> None:
        if self._pending and not self._flush_scheduled:
            self._flush_scheduled = True
            assert self._loop is not None
            self._loop.call_soon(self._flush_sqlite)
        elif self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _retry_later(self, batch: list[_Call]) -> bool:
        """Another process holds the write lock: try again shortly, without blocking the loop."""
        now = time.monotonic()
        if self._busy_since is None:
            self._busy_since = now
        if now - self._busy_since > self._lock_wait_s:
            self._busy_since = None
            return False
        self._pending = batch + self._pending
        assert self._loop is not None
        self._loop.call_later(_BUSY_RETRY_S, self._flush_sqlite)
        return True

    async def _flush_postgres(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            engine = self._engine
            for attempt in range(1, _RETRY_BATCH + 1):
                try:
                    if engine is None:
                        raise self._unavailable()
                    async with engine.begin() as aconn:
                        results = await aconn.run_sync(self._run_batch, batch)
                except DBAPIError as exc:
                    if _sqlstate(exc) in _RETRY_SQLSTATES and attempt < _RETRY_BATCH:
                        continue  # lost a race with another replica: run the batch again
                    _fail(batch, self._batch_error(exc, len(batch)))
                except Exception as exc:
                    _fail(batch, self._batch_error(exc, len(batch)))
                else:
                    _resolve(batch, results)
                break
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    # -- errors -------------------------------------------------------------------------------
    def _sqlite(self) -> tuple[Connection, sqlite3.Connection]:
        if self._conn is None or self._raw is None:
            raise self._unavailable()
        return self._conn, self._raw

    def _unavailable(self) -> AccordError:
        return AccordError(ErrorCode.UNAVAILABLE, self._unavailable_message)

    def _batch_error(self, exc: BaseException, size: int) -> BaseException:
        """What every call of a failed batch hears: the database's failure, or the bug."""
        if isinstance(exc, OSError | sqlite3.Error | SQLAlchemyError):
            logger.warning("%s: commit of %d write(s) failed: %s", self.url.shown(), size, exc)
            return self._unavailable()
        logger.exception("%s: a write failed; its batch of %d rolled back", self.url.shown(), size)
        return exc


def _resolve(batch: list[_Call], results: list[tuple[Any, Any]]) -> None:
    for call, (value, error) in zip(batch, results, strict=True):
        if call.future.done():
            continue
        if error is not None:
            call.future.set_exception(error)
        else:
            call.future.set_result(value)


def _fail(batch: list[_Call], error: BaseException) -> None:
    for call in batch:
        if not call.future.done():
            call.future.set_exception(error)


def _sqlstate(exc: DBAPIError) -> str | None:
    orig: Any = exc.orig
    for candidate in (orig, getattr(orig, "__cause__", None)):
        state = getattr(candidate, "sqlstate", None)
        if isinstance(state, str):
            return state
    return None
