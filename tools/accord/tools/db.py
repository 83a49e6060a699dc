"""A tool server's database: its schema, migrated at start, and its seed data.

The storage itself (SQLite with WAL or PostgreSQL, group commit, migrations) is the protocol
layer's (``accord.protocol.storage``, docs/storage.md); a store writes its queries once, as
functions of a SQLAlchemy Core ``Connection``: ``db.read(fn)``, and ``db.write(fn)`` with
``fn(txn)`` on ``txn.conn``. Per-row serialisation on PostgreSQL is the caller's
``SELECT ... FOR UPDATE`` (rendered as nothing on SQLite, where the writer holds the file's
write lock, ``BEGIN IMMEDIATE``, for the whole transaction).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

from accord.protocol.settings import current
from accord.protocol.storage.database import Database
from accord.protocol.storage.schema import Schema


class SeededStore(ABC):
    """Subclasses name their schema and write ``seed``; start, stop and readiness are the same
    for every tool server."""

    schema: Schema

    def __init__(self, url: str) -> None:
        self.db = Database(url, unavailable="the tool server's database is unavailable")

    async def start(self) -> None:
        await self.db.open(self.schema)  # the schema migrations first, safe with replicas
        if current().seeds_demo_data:  # never into a production store unless asked
            await self.seed(datetime.now(UTC))

    async def stop(self) -> None:
        await self.db.close()

    async def ready(self) -> bool:
        return await self.db.ping()

    def insert_ignore(
        self, table: Table, rows: list[dict[str, Any]]
    ) -> sqlite.Insert | postgresql.Insert:
        """INSERT ... ON CONFLICT DO NOTHING (idempotent seeding) on either backend."""
        return self.db.insert(table).values(rows).on_conflict_do_nothing()

    @abstractmethod
    async def seed(self, now: datetime) -> None:
        """Insert the demo data idempotently (dates relative to ``now``)."""
