"""Listing columns on workflow_runs: scope, context_id, updated_at, and their index.

An orchestrator task's A2A view is derived from its workflow: ListTasks needs the owner scope
("app/subject"), the A2A context id and the time of the last append, keyset-paginated by
(updated_at DESC, id DESC). Existing workflows get the time of their last event; their scope
and context stay NULL (v0.1 did not record them).

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
    op.create_index(
        "workflow_runs_scope_updated",
        "workflow_runs",
        ["scope", sa.text("updated_at DESC"), sa.text("id DESC")],
    )


def downgrade() -> None:
    op.drop_index("workflow_runs_scope_updated", "workflow_runs")
    for column in ("updated_at", "context_id", "scope"):
        op.drop_column("workflow_runs", column)
