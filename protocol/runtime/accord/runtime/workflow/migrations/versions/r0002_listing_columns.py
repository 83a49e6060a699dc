"""Listing columns on workflow_runs: scope, context_id, updated_at, and their index.

An agent task's A2A view is derived from its workflow: ListTasks needs the owner scope
("app/subject"), the A2A context id and the time of the last append, keyset-paginated by
(updated_at DESC, id DESC). Existing workflows get the time of their last event, and the scope
and context their start recorded (the workflow input's ``owner`` and ``session``, which every
workflow a v0.1 agent started has); a workflow without them stays unlisted (NULL).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.storage.types import EPOCH_SECONDS

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("workflow_runs", sa.Column("scope", sa.Text(), nullable=True))
    op.add_column("workflow_runs", sa.Column("context_id", sa.Text(), nullable=True))
    op.add_column(
        "workflow_runs",
        sa.Column("updated_at", EPOCH_SECONDS, nullable=False, server_default=sa.text("0")),
    )
    op.execute(
        "UPDATE workflow_runs SET updated_at = coalesce((SELECT max(e.at) FROM workflow_events e "
        "WHERE e.workflow_id = workflow_runs.id), 0)"
    )
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        field = "(e.data -> 'input' ->> '{}')"
    else:
        field = "json_extract(e.data, '$.input.{}')"
    for column, key in (("scope", "owner"), ("context_id", "session")):
        op.execute(
            f"UPDATE workflow_runs SET {column} = (SELECT {field.format(key)} "
            "FROM workflow_events e WHERE e.workflow_id = workflow_runs.id AND e.seq = 1)"
        )
    op.create_index(
        "workflow_runs_scope_updated",
        "workflow_runs",
        ["scope", sa.text("updated_at DESC"), sa.text("id DESC")],
    )


def downgrade() -> None:
    op.drop_index("workflow_runs_scope_updated", "workflow_runs")
    for column in ("updated_at", "context_id", "scope"):
        op.drop_column("workflow_runs", column)
