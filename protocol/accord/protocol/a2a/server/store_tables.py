"""The A2A task store's table: one per service, ``a2a_tasks_<service>``.

``(owner, id)`` is the key; ``ts`` is the status time in nanoseconds (-1 when the task has
none) and ``(owner, ts DESC, id DESC)`` the listing index; ``blob`` is the serialized protobuf
Task; ``worker`` the process that saved it last. ``<table>_workers`` holds each live process's
expiry (heartbeats), which tells recovery whose unfinished tasks can never finish. Each
service's table has its own migration history (``migrations/``, with the table name as the
schema option ``table``).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Index, Integer, MetaData, PrimaryKeyConstraint, Table, Text

from accord.protocol.storage.schema import Schema
from accord.protocol.storage.table_names import checked_table_name, service_table_name
from accord.protocol.storage.types import BIG_INT, BYTES, EPOCH_SECONDS

MIGRATIONS = Path(__file__).parent.parent / "migrations"


def table_name(service_name: str) -> str:
    """One table per service, so services sharing a PostgreSQL database never mix tasks."""
    return service_table_name("a2a_tasks_", service_name)


def task_table(name: str) -> Table:
    checked_table_name(name)
    table = Table(
        name,
        MetaData(),
        Column("owner", Text, nullable=False),
        Column("id", Text, nullable=False),
        Column("context_id", Text, nullable=False),
        Column("state", Integer, nullable=False),
        Column("ts", BIG_INT, nullable=False),
        Column("blob", BYTES, nullable=False),
        Column("worker", Text, nullable=True),  # the process that saved it last
        PrimaryKeyConstraint("owner", "id", name=f"{name}_pkey"),
    )
    Index(f"{name}_owner_ts", table.c.owner, table.c.ts.desc(), table.c.id.desc())
    Index(f"{name}_state", table.c.state)
    Table(
        workers_name(name),
        table.metadata,
        Column("worker", Text, nullable=False),
        Column("expires_at", EPOCH_SECONDS, nullable=False),
        PrimaryKeyConstraint("worker", name=f"{name}_workers_pkey"),
    )
    return table


def workers_name(name: str) -> str:
    return f"{name}_workers"


def workers_table(tasks: Table) -> Table:
    """The heartbeats table that goes with a task table (defined beside it, in its metadata)."""
    return tasks.metadata.tables[workers_name(tasks.name)]


def task_schema(table: Table) -> Schema:
    return Schema(
        name=table.name,
        metadata=table.metadata,
        migrations=MIGRATIONS,
        v0_1_table=table.name,
        options={"table": table.name},
    )
