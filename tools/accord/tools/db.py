"""One database per tool-server process: SQLite (WAL) by default, PostgreSQL in production.

Stores write their queries once, as plain functions of a SQLAlchemy Core ``Connection``; this
module runs them in a transaction on either backend:

- SQLite (the stdlib driver): run directly on the event-loop thread. A point query or a small
  write transaction takes tens of microseconds, less than one hop to a driver thread (which is
  what aiosqlite does for every statement), and a transaction that never awaits is atomic
  inside the process. WAL, ``synchronous=NORMAL`` (durable across process crashes; one fsync
  per checkpoint rather than per commit), and write transactions opened with ``BEGIN
  IMMEDIATE`` so that writers in other processes never both read-then-write; they wait on the
  busy timeout instead.
- PostgreSQL (asyncpg): the same function through ``AsyncConnection.run_sync``; per-row
  serialisation is the caller's ``SELECT ... FOR UPDATE`` (rendered as nothing on SQLite).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Table,
    create_engine,
    event,
    text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.sql.dml import Insert

from accord.protocol.storage.migrate import upgrade
from accord.protocol.storage.schema import Schema

T = TypeVar("T")

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=10000",
    "PRAGMA foreign_keys=ON",
)


def driver_url(url: str) -> str:
    """Map a user-facing URL (``sqlite:///f.db``, ``postgresql://...``) to the driver we use."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return parsed.set(drivername="sqlite+pysqlite").render_as_string(hide_password=False)
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    raise ValueError(
        f"unsupported database URL scheme {parsed.drivername!r}: "
        "use sqlite:///PATH or postgresql://..."
    )


class Database:
    """One engine per process, and the read/write transaction shapes every store uses."""

    def __init__(self, url: str) -> None:
        self.url = driver_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        self._sync: Engine | None = None
        self._async: AsyncEngine | None = None

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def open(self) -> None:
        if self._sync is not None or self._async is not None:
            return
        if self.is_sqlite:
            self._sync = create_engine(self.url, pool_size=2, max_overflow=2)
            _sqlite_transactions(self._sync)
        else:
            self._async = create_async_engine(self.url, pool_size=10, max_overflow=20)

    async def close(self) -> None:
        if self._sync is not None:
            self._sync.dispose()
            self._sync = None
        if self._async is not None:
            await self._async.dispose()
            self._async = None

    async def run_read(self, fn: Callable[[Connection], T], *, snapshot: bool = False) -> T:
        """Run ``fn`` in a read transaction.

        On SQLite a single statement is its own snapshot, so the BEGIN/COMMIT round trips are
        skipped unless ``snapshot`` asks for several statements to see one state.
        """
        if self._sync is not None:
            with self._sync.connect() as conn:
                if not snapshot:
                    conn = conn.execution_options(accord_begin=False)
                with conn.begin():
                    return fn(conn)
        async with self._engine().connect() as aconn, aconn.begin():
            return await aconn.run_sync(fn)

    async def run_write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a write transaction: committed if it returns, rolled back if it raises."""
        if self._sync is not None:
            with self._sync.connect() as conn:
                conn = conn.execution_options(accord_immediate=True)
                with conn.begin():
                    return fn(conn)
        async with self._engine().begin() as aconn:
            return await aconn.run_sync(fn)

    def _engine(self) -> AsyncEngine:
        if self._async is None:
            raise RuntimeError("database not opened")
        return self._async

    async def ping(self) -> bool:
        await self.run_read(lambda conn: conn.execute(text("SELECT 1")).scalar_one())
        return True

    def insert_ignore(self, table: Table, rows: list[dict[str, Any]]) -> Insert:
        """INSERT ... ON CONFLICT DO NOTHING (idempotent seeding) on either backend."""
        if self.is_sqlite:
            return sqlite.insert(table).values(rows).on_conflict_do_nothing()
        return postgresql.insert(table).values(rows).on_conflict_do_nothing()


def _sqlite_transactions(engine: Engine) -> None:
    """Take BEGIN away from the sqlite3 driver so that we decide DEFERRED or IMMEDIATE."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        for pragma in SQLITE_PRAGMAS:
            dbapi_conn.execute(pragma)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        options = conn.get_execution_options()
        if not options.get("accord_begin", True):
            return  # autocommit: each statement is its own transaction
        conn.exec_driver_sql("BEGIN IMMEDIATE" if options.get("accord_immediate") else "BEGIN")


class SeededStore(ABC):
    """A tool server's database: its schema, migrated at start, and its seed data.

    Subclasses name their tables and write ``seed``; start, stop and readiness are the same for
    every tool server.
    """

    schema: Schema

    def __init__(self, url: str) -> None:
        self.url = url
        self.db = Database(url)

    async def start(self) -> None:
        await upgrade(self.url, self.schema)  # the schema migrations, safe with replicas
        self.db.open()
        await self.seed(datetime.now(UTC))

    async def stop(self) -> None:
        await self.db.close()

    async def ready(self) -> bool:
        return await self.db.ping()

    @abstractmethod
    async def seed(self, now: datetime) -> None:
        """Insert the demo data idempotently (dates relative to ``now``)."""
