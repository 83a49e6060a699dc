"""The A2A task table as v0.1.0 created it.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.storage.migrate import option
from accord.protocol.storage.types import BIG_INT, BYTES

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = option("table")
    op.create_table(
        table,
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("context_id", sa.Text(), nullable=False),
        sa.Column("state", sa.Integer(), nullable=False),
        sa.Column("ts", BIG_INT, nullable=False),
        sa.Column("blob", BYTES, nullable=False),
        sa.PrimaryKeyConstraint("owner", "id", name=f"{table}_pkey"),
    )
    op.create_index(f"{table}_owner_ts", table, ["owner", sa.text("ts DESC"), sa.text("id DESC")])
    op.create_index(f"{table}_state", table, ["state"])


def downgrade() -> None:
    op.drop_table(option("table"))
