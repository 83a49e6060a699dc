"""Commerce keeps no refunds: the payments ledger is the one record of money paid back.

commerce_refunds only ever held the seeded history (the same rows payments seeds into its
ledger); it never learned of a refund issued later, which is why commerce's view disagreed with
the ledger. Dropping it loses nothing: orders.lookup and customers.history read refunds.list.

Revision ID: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.drop_index("commerce_refunds_by_customer", table_name="commerce_refunds")
    op.drop_index("commerce_refunds_by_order", table_name="commerce_refunds")
    op.drop_table("commerce_refunds")


def downgrade() -> None:
    # The table comes back empty: its rows were a copy of the ledger's seed.
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
