"""The event log's tables (SQLAlchemy Core), the same on SQLite and PostgreSQL.

    workflow_runs    one row per workflow: status, graph key, lease owner, closed, and the
                     listing columns (owner scope, A2A context, time of the last append)
    workflow_events  the events: (workflow_id, seq) -> type, node, data (JSON), at
    workflow_timers  (workflow_id, timer_id) -> due_at     (a projection of timer_set)
    workflow_owners  owner -> heartbeat expiry             (leases: who is alive)

Migrations: ``migrations/`` (schema ``workflow``); the baseline is v0.1.0's schema.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Index, Integer, MetaData, Table, Text, false, text

from accord.protocol.storage.schema import Schema
from accord.protocol.storage.types import EPOCH_SECONDS, FLAG, JSON_TEXT

metadata = MetaData()

workflow_runs = Table(
    "workflow_runs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("status", Text, nullable=False),
    Column("graph_key", Text, nullable=False),
    Column("lease_owner", Text),
    Column("closed", FLAG, nullable=False, server_default=false()),
    Column("scope", Text),  # the owner scope "app/subject" of the workflow's task
    Column("context_id", Text),  # its A2A context
    Column("updated_at", EPOCH_SECONDS, nullable=False, server_default=text("0")),  # last append
    Index("workflow_runs_status", "status"),
    sqlite_with_rowid=False,
)
Index(
    "workflow_runs_scope_updated",
    workflow_runs.c.scope,
    workflow_runs.c.updated_at.desc(),
    workflow_runs.c.id.desc(),
)

workflow_events = Table(
    "workflow_events",
    metadata,
    Column("workflow_id", Text, primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("type", Text, nullable=False),
    Column("node", Text),
    Column("data", JSON_TEXT, nullable=False),
    Column("at", EPOCH_SECONDS, nullable=False),
    sqlite_with_rowid=False,
)

workflow_timers = Table(
    "workflow_timers",
    metadata,
    Column("workflow_id", Text, primary_key=True),
    Column("timer_id", Text, primary_key=True),
    Column("due_at", EPOCH_SECONDS, nullable=False),
    Index("workflow_timers_due", "due_at"),
)

workflow_owners = Table(
    "workflow_owners",
    metadata,
    Column("owner", Text, primary_key=True),
    Column("expires_at", EPOCH_SECONDS, nullable=False),
)

SCHEMA = Schema(
    name="workflow",
    metadata=metadata,
    migrations=Path(__file__).with_name("migrations"),
    v0_1_table="workflow_runs",
)
