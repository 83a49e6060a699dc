"""SQLite as every store uses it: WAL, synchronous=NORMAL, and transactions we open ourselves.

The stdlib driver opens transactions implicitly (and never before DDL); we switch that off
(``isolation_level=None``) and issue ``BEGIN`` or ``BEGIN IMMEDIATE`` ourselves, so that a
migration's DDL is transactional and a writer takes the write lock before it reads.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from accord.protocol.private_files import private_dir, private_file

PRAGMAS: Final = (
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
)
# Another process's write lock: SQLITE_BUSY, or SQLITE_LOCKED for a lock of this process's
# other connections (shared cache). Compared on the primary code (the low byte).
_BUSY_CODES: Final = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


def is_busy(exc: BaseException) -> bool:
    """True if ``exc`` (a sqlite3 error, or SQLAlchemy's wrapper of one) means "locked, retry"."""
    if isinstance(exc, DBAPIError):
        exc = exc.orig  # type: ignore[assignment]
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.Error) and code is not None and code & 0xFF in _BUSY_CODES


def configure(dbapi_conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    dbapi_conn.isolation_level = None
    dbapi_conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    _wal(dbapi_conn, busy_timeout_ms / 1000)
    for pragma in PRAGMAS:
        dbapi_conn.execute(pragma)


def _wal(dbapi_conn: sqlite3.Connection, wait_s: float) -> None:
    """Switch the file to WAL (it stays so). The switch takes the exclusive lock, and SQLite
    answers BUSY at once, without its busy handler, while another connection opens the same new
    file: retried here (connections are opened off the event loop)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            mode = dbapi_conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() in ("wal", "memory"):
                return
            dbapi_conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
        time.sleep(0.01)  # opening, off the loop: a short wait for the other connection


def sqlite_engine(path: str, *, busy_timeout_ms: int = 10_000) -> Engine:
    """A SQLAlchemy engine on the stdlib driver whose ``conn.begin()`` is ours.

    ``begin()`` issues ``BEGIN``; with the execution option ``accord_immediate=True``,
    ``BEGIN IMMEDIATE`` (take the write lock now: no other writer can slip in between our read
    and our write); with ``accord_begin=False`` nothing (each statement its own transaction).

    A file that does not exist yet is created 0600 (in a 0700 directory if that is missing
    too) before SQLite opens it: SQLite would create it with the umask's mode (0644), and it
    gives the ``-wal`` and ``-shm`` files the database file's mode.
    """
    if path and path != ":memory:" and not path.startswith("file:"):
        file = Path(path)
        private_dir(file.parent.absolute())
        private_file(file)
    engine = create_engine(
        f"sqlite+pysqlite:///{path}",
        poolclass=NullPool,  # each user holds its one connection for as long as it needs it
        connect_args={"check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        configure(dbapi_conn, busy_timeout_ms)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        options = conn.get_execution_options()
        if not options.get("accord_begin", True):
            return
        conn.exec_driver_sql("BEGIN IMMEDIATE" if options.get("accord_immediate") else "BEGIN")

    return engine
