"""The payments ledger as v0.1.0 created it.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "payments_orders",
        sa.Column("order_id", sa.String(16), primary_key=True),
        sa.Column("customer_id", sa.String(16), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("total_cents", sa.Integer(), nullable=False),
    )
    op.create_table(
        "payments_refunds",
        sa.Column("receipt_id", sa.String(40), primary_key=True),
        sa.Column("customer_id", sa.String(16), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("order_id", sa.String(16), nullable=False),
        sa.Column("amount_cents", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("approved_by", sa.String(128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("customer_id", "idempotency_key", name="payments_refunds_key"),
    )
    op.create_index("payments_refunds_by_order", "payments_refunds", ["order_id"])


def downgrade() -> None:
    op.drop_table("payments_refunds")
    op.drop_table("payments_orders")
