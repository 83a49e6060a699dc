"""The commerce tables as v0.1.0 created them.

Revision ID: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "commerce_customers",
        sa.Column("customer_id", sa.String(16), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("chargebacks", sa.Integer(), nullable=False),
    )
    op.create_table(
        "commerce_orders",
        sa.Column("order_id", sa.String(16), primary_key=True),
        sa.Column(
            "customer_id",
            sa.String(16),
            sa.ForeignKey("commerce_customers.customer_id"),
            nullable=False,
        ),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("ordered_at", UTC_TIME, nullable=False),
        sa.Column("delivered_at", UTC_TIME, nullable=True),
    )
    op.create_index("ix_commerce_orders_customer_id", "commerce_orders", ["customer_id"])
    op.create_table(
        "commerce_order_items",
        sa.Column(
            "order_id",
            sa.String(16),
            sa.ForeignKey("commerce_orders.order_id"),
            primary_key=True,
        ),
        sa.Column("line", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("sku", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("quantity", sa.Integer(), nullable=False),
        sa.Column("unit_price_cents", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(64), nullable=False),
        sa.Column("final_sale", sa.Boolean(), nullable=False),
    )
    op.create_table(
        "commerce_refunds",
        sa.Column("refund_id", sa.String(64), primary_key=True),
        sa.Column(
            "order_id", sa.String(16), sa.ForeignKey("commerce_orders.order_id"), nullable=False
        ),
        sa.Column("customer_id", sa.String(16), nullable=False),
        sa.Column("amount_cents", sa.Integer(), nullable=False),
        sa.Column("refunded_at", UTC_TIME, nullable=False),
    )
    op.create_index("commerce_refunds_by_order", "commerce_refunds", ["order_id"])
    op.create_index(
        "commerce_refunds_by_customer", "commerce_refunds", ["customer_id", "refunded_at"]
    )


def downgrade() -> None:
    for table in ("commerce_refunds", "commerce_order_items", "commerce_orders"):
        op.drop_table(table)
    op.drop_table("commerce_customers")
