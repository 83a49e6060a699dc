"""Refunds and orders belong to a tenant app: ``app`` on both tables, in every key.

Before, the ledger knew only ``customer_id``: a token of app ``shop`` for C-01 was paid from
app ``accord``'s O-1005 (issue #30). Now an order is ``(app, order_id)``, a key is unique per
``(app, customer_id, idempotency_key)``, and every row v0.2 left gets the demo app (the one app
a v0.2 mesh served). Also an index for the customer's 90-day sums (approval by the money).

PostgreSQL changes the tables in place; SQLite cannot change a primary key, so it builds each
table anew, copies the rows and drops the old one (SQLite's documented way), with the same
result as a fresh database.

Revision ID: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.auth.names import DEFAULT_APP

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

UTC_TIME = sa.DateTime(timezone=True)


def _app(server_default: str | None = None) -> sa.Column[str]:
    return sa.Column("app", sa.String(128), nullable=False, server_default=server_default)


ORDER_COLUMNS = ("order_id", "customer_id", "currency", "total_cents")
REFUND_COLUMNS = (
    "receipt_id",
    "customer_id",
    "idempotency_key",
    "order_id",
    "amount_cents",
    "currency",
    "reason",
    "approved_by",
    "created_at",
)


def upgrade() -> None:
    if op.get_context().dialect.name == "sqlite":
        _rebuild(with_app=True)
    else:
        for table in ("payments_orders", "payments_refunds"):
            op.add_column(table, _app(DEFAULT_APP))
            op.alter_column(table, "app", server_default=None)
        op.drop_constraint("payments_orders_pkey", "payments_orders", type_="primary")
        op.create_primary_key("payments_orders_pk", "payments_orders", ["app", "order_id"])
        op.drop_constraint("payments_refunds_key", "payments_refunds", type_="unique")
        op.create_unique_constraint(
            "payments_refunds_key", "payments_refunds", ["app", "customer_id", "idempotency_key"]
        )
        op.drop_index("payments_refunds_by_order", table_name="payments_refunds")
    _indexes(with_app=True)


def downgrade() -> None:
    # Only the demo app's rows fit the old keys: another app's are dropped with the column.
    for table in ("payments_refunds", "payments_orders"):
        op.execute(sa.text(f"DELETE FROM {table} WHERE app <> :app").bindparams(app=DEFAULT_APP))
    op.drop_index("payments_orders_by_customer", table_name="payments_orders")
    op.drop_index("payments_refunds_by_customer", table_name="payments_refunds")
    op.drop_index("payments_refunds_by_order", table_name="payments_refunds")
    if op.get_context().dialect.name == "sqlite":
        _rebuild(with_app=False)
    else:
        op.drop_constraint("payments_refunds_key", "payments_refunds", type_="unique")
        op.create_unique_constraint(
            "payments_refunds_key", "payments_refunds", ["customer_id", "idempotency_key"]
        )
        op.drop_constraint("payments_orders_pk", "payments_orders", type_="primary")
        op.create_primary_key("payments_orders_pkey", "payments_orders", ["order_id"])
        for table in ("payments_orders", "payments_refunds"):
            op.drop_column(table, "app")
    _indexes(with_app=False)


def _indexes(*, with_app: bool) -> None:
    if with_app:
        op.create_index("payments_orders_by_customer", "payments_orders", ["app", "customer_id"])
        op.create_index("payments_refunds_by_order", "payments_refunds", ["app", "order_id"])
        op.create_index(
            "payments_refunds_by_customer",
            "payments_refunds",
            ["app", "customer_id", "created_at"],
        )
    else:
        op.create_index("payments_refunds_by_order", "payments_refunds", ["order_id"])


def _rebuild(*, with_app: bool) -> None:
    """SQLite: both tables built anew (with or without ``app``), their rows copied."""
    if with_app:
        op.drop_index("payments_refunds_by_order", table_name="payments_refunds")
    for table in ("payments_orders", "payments_refunds"):
        op.rename_table(table, f"{table}_old")
    app = [_app()] if with_app else []
    op.create_table(
        "payments_orders",
        sa.Column("order_id", sa.String(16), nullable=False),
        sa.Column("customer_id", sa.String(16), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("total_cents", sa.Integer(), nullable=False),
        *app,
        sa.PrimaryKeyConstraint(
            *(("app", "order_id") if with_app else ("order_id",)),
            name="payments_orders_pk" if with_app else None,
        ),
    )
    key = (
        ("app", "customer_id", "idempotency_key")
        if with_app
        else ("customer_id", "idempotency_key")
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
        sa.Column("created_at", UTC_TIME, nullable=False),
        *([_app()] if with_app else []),
        sa.UniqueConstraint(*key, name="payments_refunds_key"),
    )
    for table, columns in (
        ("payments_orders", ORDER_COLUMNS),
        ("payments_refunds", REFUND_COLUMNS),
    ):
        _copy(table, columns, with_app=with_app)
        op.drop_table(f"{table}_old")


def _copy(table: str, columns: tuple[str, ...], *, with_app: bool) -> None:
    names = ", ".join(columns)
    if with_app:
        statement = sa.text(
            f"INSERT INTO {table} ({names}, app) SELECT {names}, :app FROM {table}_old"
        ).bindparams(app=DEFAULT_APP)
    else:
        statement = sa.text(f"INSERT INTO {table} ({names}) SELECT {names} FROM {table}_old")
    op.execute(statement)
