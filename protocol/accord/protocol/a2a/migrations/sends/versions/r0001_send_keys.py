"""The keys of sent messages: ``(owner, message_id)`` names a request (idempotent send).

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
        sa.Column("message_id", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.Column("reply", BYTES, nullable=True),
        sa.Column("worker", sa.Text(), nullable=True),
        sa.Column("lease_until", EPOCH_SECONDS, nullable=False),
        sa.Column("created_at", EPOCH_SECONDS, nullable=False),
        sa.PrimaryKeyConstraint("owner", "message_id", name=f"{table}_pkey"),
    )
    op.create_index(f"{table}_created", table, ["created_at"])


def downgrade() -> None:
    op.drop_table(option("table"))
