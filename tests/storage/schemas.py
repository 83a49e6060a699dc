"""Every schema the services keep, and a dialect-neutral description of a database's tables."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, inspect, text

from accord.protocol.a2a.server.send_tables import send_schema, send_table, send_table_name
from accord.protocol.a2a.server.store_tables import table_name, task_schema, task_table
from accord.protocol.push.tables import push_schema, push_table_name
from accord.protocol.storage.schema import Schema
from accord.runtime.workflow.tables import SCHEMA as WORKFLOW
from accord.tools.commerce_store import SCHEMA as COMMERCE
from accord.tools.ledger import SCHEMA as PAYMENTS


def task_schema_of(service: str) -> Schema:
    return task_schema(task_table(table_name(service)))


def push_schema_of(service: str) -> Schema:
    return push_schema(push_table_name(service))


def send_schema_of(service: str) -> Schema:
    return send_schema(send_table(send_table_name(service)))


# v0.1's orchestrator task table is no longer a store (the orchestrator's tasks are views of
# its workflow log): it is left as it was, unread, and a release since v0.2 has none.
RETIRED: tuple[Schema, ...] = (task_schema_of("orchestrator"),)
# SQLite: file -> schemas in it (as `accord up` lays them out); PostgreSQL: all in one database.
# Each agent keeps its push notification tables (configs, outbox; since v0.2) and its sent-message
# keys (since v0.3) in its own file.
SQLITE_FILES: dict[str, tuple[Schema, ...]] = {
    "orchestrator": (*RETIRED, push_schema_of("orchestrator"), send_schema_of("orchestrator")),
    "orchestrator-workflows": (WORKFLOW,),
    "policy": (task_schema_of("policy"), push_schema_of("policy"), send_schema_of("policy")),
    "risk": (task_schema_of("risk"), push_schema_of("risk"), send_schema_of("risk")),
    "commerce": (COMMERCE,),
    "payments": (PAYMENTS,),
}
ALL: tuple[Schema, ...] = tuple(s for group in SQLITE_FILES.values() for s in group)
# Schemas no recorded release has yet (each release's fixture is made by then: a later one has
# them): an upgrade of an older release's database makes them.
SINCE_0_2: frozenset[str] = frozenset(
    send_schema_of(s).name for s in ("orchestrator", "policy", "risk")
)
# What the services keep now.
LIVE: tuple[Schema, ...] = tuple(s for s in ALL if s not in RETIRED)


def describe(conn: Connection) -> dict[str, Any]:
    """Tables (without the version tables): columns, keys, indexes, as the database reports them."""
    found = inspect(conn)
    out: dict[str, Any] = {}
    for table in sorted(found.get_table_names()):
        if table.startswith("alembic_version"):
            continue
        pk = found.get_pk_constraint(table)["constrained_columns"]
        entry: dict[str, Any] = {
            # A key column's nullability is left out: v0.1 declared `owner TEXT PRIMARY KEY`
            # without NOT NULL, which SQLite (a legacy quirk of rowid tables) reports nullable.
            "columns": [
                (
                    c["name"],
                    str(c["type"]),
                    c["nullable"] and c["name"] not in pk,
                    _default(c.get("default")),
                )
                for c in found.get_columns(table)
            ],
            "pk": pk,
            "indexes": sorted(
                (i["name"], tuple(str(c) for c in i["column_names"]), bool(i["unique"]))
                for i in found.get_indexes(table)
            ),
            "unique": sorted(
                (u["name"], tuple(u["column_names"])) for u in found.get_unique_constraints(table)
            ),
            "fks": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                for f in found.get_foreign_keys(table)
            ),
        }
        if conn.dialect.name == "sqlite":
            sql = conn.execute(
                text("SELECT sql FROM sqlite_master WHERE name = :t"), {"t": table}
            ).scalar_one()
            entry["without_rowid"] = "WITHOUT ROWID" in sql.upper()
        out[table] = entry
    return out


def columns(conn: Connection) -> dict[str, list[str]]:
    found = inspect(conn)
    return {
        t: [c["name"] for c in found.get_columns(t)]
        for t in found.get_table_names()
        if not t.startswith("alembic_version")
    }


def rows(conn: Connection, of: dict[str, list[str]]) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables and columns ``of``, in a stable order."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table, cols in sorted(of.items()):
        query = text(f"SELECT {', '.join(cols)} FROM {table}")
        out[table] = sorted((tuple(r) for r in conn.execute(query)), key=repr)
    return out


def _default(value: object) -> str | None:
    if value is None:
        return None
    return str(value).strip("'").lower().replace("false", "0")
