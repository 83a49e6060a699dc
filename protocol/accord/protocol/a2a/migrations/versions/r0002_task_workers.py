"""Which process works on each task, and which processes are alive: replica-safe recovery.

Every save records the saving process (``worker``) in the task's row, and every process renews
its row in ``<table>_workers`` (an expiry time) while it runs. A task left queued or running
by a process whose row has expired can never finish, so recovery fails it; a live replica's
task is left alone. v0.1 rows have no worker: they are a previous process's by definition.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.storage.migrate import option
from accord.protocol.storage.types import EPOCH_SECONDS

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = option("table")
    op.add_column(table, sa.Column("worker", sa.Text(), nullable=True))
    op.create_table(
        f"{table}_workers",
        sa.Column("worker", sa.Text(), nullable=False),
        sa.Column("expires_at", EPOCH_SECONDS, nullable=False),
        sa.PrimaryKeyConstraint("worker", name=f"{table}_workers_pkey"),
    )


def downgrade() -> None:
    table = option("table")
    op.drop_table(f"{table}_workers")
    op.drop_column(table, "worker")
