"""The push tables' migration history makes exactly what tables.py describes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection

from accord.protocol.push.tables import push_schema, push_table_name
from accord.protocol.storage.migrate import upgrade
from accord.protocol.storage.sqlite import sqlite_engine


async def test_the_migration_makes_what_the_tables_describe(tmp_path: Path) -> None:
    schema = push_schema(push_table_name("orchestrator"))
    path = tmp_path / "push.db"
    _, after = await upgrade(f"sqlite:///{path}", schema)
    assert after.up_to_date

    def diff(conn: Connection) -> list[Any]:
        tables = set(schema.metadata.tables)
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "compare_server_default": True,
                "include_name": lambda name, kind, _parent: kind != "table" or name in tables,
            },
        )
        return list(compare_metadata(context, schema.metadata))

    engine = sqlite_engine(str(path))
    try:
        with engine.connect() as conn:
            assert diff(conn) == []
    finally:
        engine.dispose()
