"""SQL backends of :class:`~accord.protocol.a2a.store.AccordTaskStore`: SQLite and PostgreSQL.

Both keep the same row: ``(owner, id, context_id, state, ts, blob, worker)`` with primary key
``(owner, id)`` and an index on ``(owner, ts, id)`` for listing. ``ts`` is the status time in
nanoseconds (-1 when the task has none), ``blob`` the serialized protobuf Task, ``worker`` the
process that saved it. ``<table>_workers`` keeps each live process's expiry: recovery fails
the unfinished tasks of processes that are not alive (``fail_orphans``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from accord.protocol.a2a.store_tables import task_schema, task_table
from accord.protocol.storage.migrate import upgrade

Row = tuple[str, str, str, int, int, bytes, str]  # owner, id, context, state, ts, blob, worker
Op = Row | tuple[str, str]  # an upsert, or a delete (owner, id)
Rewritten = tuple[int, int, bytes]  # a task's new state, ts and blob


@dataclass(frozen=True)
class ListQuery:
    owner: str
    context_id: str | None
    state: int | None
    min_ts: int | None
    after: tuple[int, str] | None  # rows strictly below (ts, id) in (ts desc, id desc) order
    inclusive: bool
    limit: int


class Backend(Protocol):
    inline: bool  # True when write_now() may be called on the event loop

    def write_now(self, ops: Sequence[Op]) -> None: ...
    async def write(self, ops: Sequence[Op]) -> None: ...
    async def get(self, owner: str, task_id: str) -> bytes | None: ...
    async def list(self, query: ListQuery) -> tuple[list[bytes], int]: ...
    async def heartbeat(self, worker: str, ttl_s: float) -> None: ...
    async def drop_worker(self, worker: str) -> None: ...
    async def fail_orphans(
        self, worker: str, states: Sequence[int], rewrite: Callable[[bytes], Rewritten]
    ) -> int: ...
    async def close(self) -> None: ...


async def open_backend(url: str, table: str) -> Backend:
    await upgrade(url, task_schema(task_table(table)))  # migrations, safe with replicas
    scheme = url.split(":", 1)[0].split("+", 1)[0].lower()
    if scheme == "sqlite":
        backend = SqliteBackend(_sqlite_path(url), table)
        await backend.start()
        return backend
    if scheme in ("postgresql", "postgres"):
        pg = PostgresBackend(_asyncpg_dsn(url), table)
        await pg.start()
        return pg
    raise ValueError(f"unsupported task store URL scheme {scheme!r} (sqlite or postgresql)")


def _sqlite_path(url: str) -> str:
    # sqlite:///relative.db, sqlite:////abs/path.db, sqlite+aiosqlite:///... ; :memory: too.
    rest = url.split(":", 1)[1]
    path = rest[3:] if rest.startswith("///") else rest.lstrip("/")
    return unquote(path) or ":memory:"


def _asyncpg_dsn(url: str) -> str:
    parts = urlsplit(url)
    return parts._replace(scheme="postgresql").geturl()


def _list_sql(table: str, q: ListQuery, ph: Callable[[int], str]) -> tuple[str, str, list[Any]]:
    where = [f"owner = {ph(1)}"]
    args: list[Any] = [q.owner]
    if q.context_id is not None:
        args.append(q.context_id)
        where.append(f"context_id = {ph(len(args))}")
    if q.state is not None:
        args.append(q.state)
        where.append(f"state = {ph(len(args))}")
    if q.min_ts is not None:
        args.append(q.min_ts)
        where.append(f"ts >= {ph(len(args))}")
    count_sql = f"SELECT COUNT(*) FROM {table} WHERE {' AND '.join(where)}"
    count_args = len(args)
    if q.after is not None:
        ts, task_id = q.after
        args += [ts, ts, task_id]
        op = "<=" if q.inclusive else "<"
        n = len(args)
        where.append(f"(ts < {ph(n - 2)} OR (ts = {ph(n - 1)} AND id {op} {ph(n)}))")
    args.append(q.limit)
    page_sql = (
        f"SELECT blob FROM {table} WHERE {' AND '.join(where)} "
        f"ORDER BY ts DESC, id DESC LIMIT {ph(len(args))}"
    )
    return count_sql, page_sql, [count_args, *args]


class SqliteBackend:
    """One connection on the event loop for reads and writes; checkpoints in a thread.

    A commit in WAL mode with ``synchronous=NORMAL`` is a write to the WAL file, no fsync:
    tens of microseconds, less than handing the work to a thread and back (which also makes
    the two threads fight over the GIL). The one slow step, the checkpoint that copies the WAL
    into the database and fsyncs, is taken off the commit path: automatic checkpoints are off
    and a PASSIVE checkpoint runs in a background thread every CHECKPOINT_EVERY commits.
    One process per database file (the embedded default); another process holding the write
    lock would make a commit wait up to the busy timeout.
    """

    CHECKPOINT_EVERY = 200

    def __init__(self, path: str, table: str) -> None:
        self.path = path
        self.table = table
        self._conn: sqlite3.Connection | None = None
        self._checkpointer = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"{table}-checkpoint"
        )
        self._checkpointing: asyncio.Future[None] | None = None
        self._commits = 0
        t = table
        self._upsert = (
            f"INSERT INTO {t} (owner, id, context_id, state, ts, blob, worker) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (owner, id) DO UPDATE SET context_id = excluded.context_id, "
            "state = excluded.state, ts = excluded.ts, blob = excluded.blob, "
            "worker = excluded.worker"
        )
        self._delete = f"DELETE FROM {t} WHERE owner = ? AND id = ?"
        self._get = f"SELECT blob FROM {t} WHERE owner = ? AND id = ?"
        self._rewrite = f"UPDATE {t} SET state = ?, ts = ?, blob = ? WHERE owner = ? AND id = ?"

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    async def start(self) -> None:
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect()
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        self._conn = conn

    @property
    def conn(self) -> sqlite3.Connection:
        assert self._conn is not None, "backend not started"
        return self._conn

    inline = True

    async def write(self, ops: Sequence[Op]) -> None:
        self.write_now(ops)

    def write_now(self, ops: Sequence[Op]) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            if all(len(op) != 2 for op in ops):
                conn.executemany(self._upsert, ops)  # the common case: saves only
            else:
                for op in ops:  # order matters once a delete is in the batch
                    conn.execute(self._delete if len(op) == 2 else self._upsert, op)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._commits += 1
        if self._commits >= self.CHECKPOINT_EVERY and self.path != ":memory:":
            self._maybe_checkpoint()

    def _maybe_checkpoint(self) -> None:
        if self._checkpointing is not None and not self._checkpointing.done():
            return
        self._commits = 0
        self._checkpointing = asyncio.get_running_loop().run_in_executor(
            self._checkpointer, self._checkpoint, "PASSIVE"
        )

    def _checkpoint(self, mode: str) -> None:
        conn = self._connect()
        try:
            conn.execute(f"PRAGMA wal_checkpoint({mode})")
        finally:
            conn.close()

    async def get(self, owner: str, task_id: str) -> bytes | None:
        row = self.conn.execute(self._get, (owner, task_id)).fetchone()
        return bytes(row[0]) if row is not None else None

    async def list(self, query: ListQuery) -> tuple[list[bytes], int]:
        count_sql, page_sql, args = _list_sql(self.table, query, lambda _: "?")
        n = args[0]
        rest = args[1:]
        total = self.conn.execute(count_sql, rest[:n]).fetchone()[0]
        rows = self.conn.execute(page_sql, rest).fetchall()
        return [bytes(r[0]) for r in rows], int(total)

    async def heartbeat(self, worker: str, ttl_s: float) -> None:
        # One process per SQLite file: the row only says who saved last; no one else reads it.
        del worker, ttl_s

    async def drop_worker(self, worker: str) -> None:
        del worker

    async def fail_orphans(
        self, worker: str, states: Sequence[int], rewrite: Callable[[bytes], Rewritten]
    ) -> int:
        """One process per file by design: every other process's unfinished task is an
        orphan (its process is gone, since this one holds the file)."""
        conn = self.conn
        marks = ", ".join("?" for _ in states)
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = conn.execute(
                f"SELECT owner, id, blob FROM {self.table} WHERE state IN ({marks}) "
                "AND (worker IS NULL OR worker != ?)",
                (*states, worker),
            ).fetchall()
            for owner, task_id, blob in rows:
                conn.execute(self._rewrite, (*rewrite(bytes(blob)), owner, task_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(rows)

    async def close(self) -> None:
        if self._checkpointing is not None:
            await asyncio.gather(self._checkpointing, return_exceptions=True)
        self._checkpointer.shutdown(wait=True)
        if self._conn is not None:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()
            self._conn = None


class PostgresBackend:
    """asyncpg pool; writes are batched by the store, one transaction per batch."""

    inline = False

    def write_now(self, ops: Sequence[Op]) -> None:
        raise NotImplementedError("PostgreSQL writes are asynchronous")

    def __init__(self, dsn: str, table: str) -> None:
        self.dsn = dsn
        self.table = table
        self._pool: Any = None
        t = table
        self._upsert = (
            f"INSERT INTO {t} (owner, id, context_id, state, ts, blob, worker) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (owner, id) DO UPDATE SET "
            "context_id = EXCLUDED.context_id, state = EXCLUDED.state, ts = EXCLUDED.ts, "
            "blob = EXCLUDED.blob, worker = EXCLUDED.worker"
        )
        self._delete = f"DELETE FROM {t} WHERE owner = $1 AND id = $2"

    async def start(self) -> None:
        import asyncpg  # only a PostgreSQL deployment pays for the import

        self._pool = await asyncpg.create_pool(self.dsn, min_size=1, max_size=8)

    async def write(self, ops: Sequence[Op]) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            if all(len(op) != 2 for op in ops):
                await conn.executemany(self._upsert, ops)  # the common case: saves only
                return
            for op in ops:  # order matters once a delete is in the batch
                await conn.execute(self._delete if len(op) == 2 else self._upsert, *op)

    async def get(self, owner: str, task_id: str) -> bytes | None:
        blob = await self._pool.fetchval(
            f"SELECT blob FROM {self.table} WHERE owner = $1 AND id = $2", owner, task_id
        )
        return bytes(blob) if blob is not None else None

    async def list(self, query: ListQuery) -> tuple[list[bytes], int]:
        count_sql, page_sql, args = _list_sql(self.table, query, lambda i: f"${i}")
        n = args[0]
        rest = args[1:]
        async with self._pool.acquire() as conn:
            total = await conn.fetchval(count_sql, *rest[:n])
            rows = await conn.fetch(page_sql, *rest)
        return [bytes(r[0]) for r in rows], int(total)

    async def heartbeat(self, worker: str, ttl_s: float) -> None:
        """Alive for ``ttl_s`` more seconds, by the database's clock (every replica's)."""
        await self._pool.execute(
            f"INSERT INTO {self.table}_workers (worker, expires_at) "
            "VALUES ($1, extract(epoch FROM clock_timestamp()) + $2) "
            "ON CONFLICT (worker) DO UPDATE SET expires_at = EXCLUDED.expires_at",
            worker,
            ttl_s,
        )

    async def drop_worker(self, worker: str) -> None:
        await self._pool.execute(f"DELETE FROM {self.table}_workers WHERE worker = $1", worker)

    async def fail_orphans(
        self, worker: str, states: Sequence[int], rewrite: Callable[[bytes], Rewritten]
    ) -> int:
        """Unfinished tasks whose process is not alive (no unexpired heartbeat): a live
        replica's task is left alone. Rows are locked, so two replicas never both rewrite one;
        expired heartbeats are forgotten in the same transaction."""
        t = self.table
        async with self._pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                f"SELECT owner, id, blob FROM {t} WHERE state = ANY($1::int[]) "
                "AND (worker IS NULL OR (worker != $2 AND worker NOT IN (SELECT worker FROM "
                f"{t}_workers WHERE expires_at > extract(epoch FROM clock_timestamp())))) "
                "FOR UPDATE SKIP LOCKED",
                list(states),
                worker,
            )
            for row in rows:
                await conn.execute(
                    f"UPDATE {t} SET state = $1, ts = $2, blob = $3 WHERE owner = $4 AND id = $5",
                    *rewrite(bytes(row["blob"])),
                    row["owner"],
                    row["id"],
                )
            await conn.execute(
                f"DELETE FROM {t}_workers WHERE expires_at < "
                "extract(epoch FROM clock_timestamp()) - 86400"
            )
        return len(rows)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
