"""Schema migrations with Alembic: upgrade at service start and from `accord db upgrade`.

Each :class:`Schema` has its own history (a folder of revisions whose ``env.py`` calls
:func:`run_environment`) and its own version table, so the services' schemas can share one
PostgreSQL database. An upgrade is one transaction:

- PostgreSQL: ``pg_advisory_xact_lock`` on the version table's name first, so of several
  replicas starting at once one migrates and the others then find the head; DDL is
  transactional, so a failed upgrade leaves the previous revision.
- SQLite: ``BEGIN IMMEDIATE`` (the file's write lock) first; SQLite's DDL is transactional too.

A v0.1 database (tables, no version table) is stamped at the baseline revision, which is exactly
the v0.1 schema, and upgraded from there. A database at a revision this code does not know (a
newer release wrote it) is refused with VERSION_UNSUPPORTED instead of being touched.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypeVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, inspect, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.storage.schema import BASELINE, Schema
from accord.protocol.storage.sqlite import sqlite_engine
from accord.protocol.storage.urls import parse_url

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Revision:
    """Where one schema of one database stands."""

    schema: str
    current: str | None  # None: no tables yet, or v0.1 without a version table
    head: str
    unversioned: bool = False  # v0.1's tables without a version table

    @property
    def up_to_date(self) -> bool:
        return self.current == self.head


@cache
def _script(migrations: Path) -> ScriptDirectory:
    return ScriptDirectory(str(migrations))


def head(schema: Schema) -> str:
    heads = _script(schema.migrations).get_heads()
    if len(heads) != 1:  # a history is linear: two heads are a merge someone forgot
        raise RuntimeError(f"schema {schema.name} has heads {heads}, expected one")
    return heads[0]


def revision_on(conn: Connection, schema: Schema) -> Revision:
    """Read where ``conn``'s database stands (no lock, no write)."""
    context = MigrationContext.configure(conn, opts={"version_table": schema.version_table})
    heads = context.get_current_heads()
    current = heads[0] if heads else None
    latest = head(schema)
    if current is not None and current != latest:
        try:
            _script(schema.migrations).get_revision(current)
        except CommandError:
            raise _newer(schema, current) from None
    unversioned = current is None and inspect(conn).has_table(schema.v0_1_table)
    return Revision(schema.name, current, latest, unversioned)


def upgrade_on(conn: Connection, schema: Schema) -> tuple[Revision, Revision]:
    """Upgrade ``conn``'s database to the head (``conn`` not in a transaction); (before, after)."""
    before = revision_on(conn, schema)
    conn.rollback()  # end the read's implicit transaction: the upgrade takes its lock first
    if before.up_to_date:
        return before, before
    with conn.execution_options(accord_immediate=True).begin():
        if conn.dialect.name == "postgresql":
            key = zlib.crc32(schema.version_table.encode())
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
        locked = revision_on(conn, schema)  # another process may have upgraded meanwhile
        if not locked.up_to_date:
            config = Config()
            config.set_main_option("script_location", str(schema.migrations))
            config.attributes["connection"] = conn
            config.attributes["schema"] = schema
            command.upgrade(config, "head")
            logger.info(
                "schema %s: upgraded from %s to %s",
                schema.name,
                locked.current or ("v0.1 (unversioned)" if locked.unversioned else "empty"),
                locked.head,
            )
    return before, Revision(schema.name, before.head, before.head)


def run_environment() -> None:
    """The body of every history's ``env.py``: migrate the connection `upgrade_on` handed over."""
    from alembic import context

    conn = context.config.attributes.get("connection")
    schema = context.config.attributes.get("schema")
    if not isinstance(conn, Connection) or not isinstance(schema, Schema):
        raise RuntimeError("Accord's migrations run through `accord db upgrade`, not alembic")
    context.configure(
        connection=conn,
        target_metadata=schema.metadata,
        version_table=schema.version_table,
        transactional_ddl=True,
        accord_options=dict(schema.options),
    )
    migration = context.get_context()
    if not migration.get_current_heads() and inspect(conn).has_table(schema.v0_1_table):
        migration.stamp(context.script, BASELINE)
    with context.begin_transaction():
        context.run_migrations()


def option(name: str) -> str:
    """A schema option, inside a revision (e.g. ``option("table")`` of the A2A task store)."""
    from alembic import op

    value: str = op.get_context().opts["accord_options"][name]
    return value


async def upgrade(url: str, schema: Schema) -> tuple[Revision, Revision]:
    """Upgrade ``schema`` in the database at ``url`` to the head; (before, after)."""
    return await _on_database(url, schema, upgrade_on)


async def current(url: str, schema: Schema) -> Revision:
    """Where ``schema`` stands in the database at ``url`` (a missing SQLite file is not made)."""
    path = parse_url(url).sqlite_path
    if path is not None and path != ":memory:" and not await asyncio.to_thread(Path(path).exists):
        return Revision(schema.name, None, head(schema))
    return await _on_database(url, schema, revision_on)


async def _on_database(url: str, schema: Schema, fn: Callable[[Connection, Schema], T]) -> T:
    database = parse_url(url)
    try:
        if database.sqlite_path is not None:
            return await asyncio.to_thread(_on_sqlite, database.sqlite_path, schema, fn)
        engine = create_async_engine(database.driver(), poolclass=NullPool)
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(fn, schema)
        finally:
            await engine.dispose()
    except (OSError, SQLAlchemyError) as exc:
        raise AccordError(
            ErrorCode.UNAVAILABLE,
            "the database is unavailable",
            {"database": database.shown(), "schema": schema.name},
        ) from exc


def _on_sqlite(path: str, schema: Schema, fn: Callable[[Connection, Schema], T]) -> T:
    engine = sqlite_engine(path, busy_timeout_ms=30_000)
    try:
        with engine.connect() as conn:
            return fn(conn, schema)
    finally:
        engine.dispose()


def _newer(schema: Schema, revision: str) -> AccordError:
    return AccordError(
        ErrorCode.VERSION_UNSUPPORTED,
        "the database's schema is newer than this code: upgrade Accord, or restore a backup",
        {"schema": schema.name, "revision": revision, "head": head(schema)},
    )
