"""The event log as v0.1.0 created it.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.storage.types import EPOCH_SECONDS, FLAG, JSON_TEXT

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workflow_runs",
        sa.Column("id", sa.Text(), primary_key=True),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("graph_key", sa.Text(), nullable=False),
        sa.Column("lease_owner", sa.Text()),
        sa.Column("closed", FLAG, nullable=False, server_default=sa.false()),
        sqlite_with_rowid=False,
    )
    op.create_index("workflow_runs_status", "workflow_runs", ["status"])
    op.create_table(
        "workflow_events",
        sa.Column("workflow_id", sa.Text(), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("node", sa.Text()),
        sa.Column("data", JSON_TEXT, nullable=False),
        sa.Column("at", EPOCH_SECONDS, nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "workflow_timers",
        sa.Column("workflow_id", sa.Text(), primary_key=True),
        sa.Column("timer_id", sa.Text(), primary_key=True),
        sa.Column("due_at", EPOCH_SECONDS, nullable=False),
    )
    op.create_index("workflow_timers_due", "workflow_timers", ["due_at"])
    op.create_table(
        "workflow_owners",
        sa.Column("owner", sa.Text(), primary_key=True),
        sa.Column("expires_at", EPOCH_SECONDS, nullable=False),
    )


def downgrade() -> None:
    for table in ("workflow_owners", "workflow_timers", "workflow_events", "workflow_runs"):
        op.drop_table(table)
