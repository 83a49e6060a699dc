"""Push notification configs and the outbox of undelivered notifications.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.storage.migrate import option
from accord.protocol.storage.types import BYTES, EPOCH_SECONDS

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = option("table")
    op.create_table(
        table,
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("blob", BYTES, nullable=False),
        sa.Column("created_at", EPOCH_SECONDS, nullable=False),
        sa.Column("last_change", sa.Text(), nullable=True),
        sa.Column("last_state", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("owner", "task_id", "id", name=f"{table}_pkey"),
    )
    op.create_index(f"{table}_task", table, ["task_id"])
    outbox = f"{table}_outbox"
    op.create_table(
        outbox,
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.Column("config_id", sa.Text(), nullable=False),
        sa.Column("dedupe", sa.Text(), nullable=False),
        sa.Column("body", BYTES, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("due_at", EPOCH_SECONDS, nullable=False),
        sa.Column("created_at", EPOCH_SECONDS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=f"{outbox}_pkey"),
    )
    op.create_index(f"{outbox}_dedupe", outbox, ["dedupe"], unique=True)
    op.create_index(f"{outbox}_due", outbox, ["due_at"])


def downgrade() -> None:
    table = option("table")
    op.drop_table(f"{table}_outbox")
    op.drop_table(table)
