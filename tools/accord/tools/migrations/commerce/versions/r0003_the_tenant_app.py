"""Customers and orders belong to a tenant app: ``app`` on every table, in every key.

Before, commerce knew only ``customer_id``: a token of app ``shop`` for C-01 read app
``accord``'s C-01 orders and history (issue #30). Now a customer is ``(app, customer_id)``, an
order ``(app, order_id)`` and an item ``(app, order_id, line)``, with foreign keys to match, and
every row v0.2 left gets the demo app (the one app a v0.2 mesh served).

PostgreSQL changes the tables in place; SQLite cannot change a primary key or a foreign key, so
it builds each table anew, copies the rows and drops the old one (SQLite's documented way, with
the foreign keys on: the old tables are renamed first, which carries their references along).

Revision ID: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.auth.names import DEFAULT_APP

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

UTC_TIME = sa.DateTime(timezone=True)
# Parents first (the order rows are created and copied in), children first when dropped.
TABLES = ("commerce_customers", "commerce_orders", "commerce_order_items")
COLUMNS = {
    "commerce_customers": ("customer_id", "name", "created_at", "chargebacks"),
    "commerce_orders": (
        "order_id",
        "customer_id",
        "status",
        "currency",
        "ordered_at",
        "delivered_at",
    ),
    "commerce_order_items": (
        "order_id",
        "line",
        "sku",
        "name",
        "quantity",
        "unit_price_cents",
        "category",
        "final_sale",
    ),
}
# The keys of 0001 (PostgreSQL's default names) and of this revision.
OLD_PKS = {
    "commerce_customers": ("commerce_customers_pkey", ["customer_id"]),
    "commerce_orders": ("commerce_orders_pkey", ["order_id"]),
    "commerce_order_items": ("commerce_order_items_pkey", ["order_id", "line"]),
}
NEW_PKS = {
    "commerce_customers": ("commerce_customers_pk", ["app", "customer_id"]),
    "commerce_orders": ("commerce_orders_pk", ["app", "order_id"]),
    "commerce_order_items": ("commerce_order_items_pk", ["app", "order_id", "line"]),
}
OLD_FKS = (
    ("commerce_orders_customer_id_fkey", "commerce_orders", "commerce_customers", ["customer_id"]),
    ("commerce_order_items_order_id_fkey", "commerce_order_items", "commerce_orders", ["order_id"]),
)
NEW_FKS = (
    (
        "commerce_orders_customer_fk",
        "commerce_orders",
        "commerce_customers",
        ["app", "customer_id"],
    ),
    (
        "commerce_order_items_order_fk",
        "commerce_order_items",
        "commerce_orders",
        ["app", "order_id"],
    ),
)
OLD_INDEX = ("ix_commerce_orders_customer_id", ["customer_id"])
NEW_INDEX = ("commerce_orders_by_customer", ["app", "customer_id"])


def _app(server_default: str | None = None) -> sa.Column[str]:
    return sa.Column("app", sa.String(128), nullable=False, server_default=server_default)


def upgrade() -> None:
    op.drop_index(OLD_INDEX[0], table_name="commerce_orders")
    if op.get_context().dialect.name == "sqlite":
        _rebuild(with_app=True)
    else:
        _alter(OLD_FKS, OLD_PKS, NEW_PKS, NEW_FKS, add_app=True)
    op.create_index(NEW_INDEX[0], "commerce_orders", NEW_INDEX[1])


def downgrade() -> None:
    # Only the demo app's rows fit the old keys: another app's are dropped with the column.
    for table in reversed(TABLES):
        op.execute(sa.text(f"DELETE FROM {table} WHERE app <> :app").bindparams(app=DEFAULT_APP))
    op.drop_index(NEW_INDEX[0], table_name="commerce_orders")
    if op.get_context().dialect.name == "sqlite":
        _rebuild(with_app=False)
    else:
        _alter(NEW_FKS, NEW_PKS, OLD_PKS, OLD_FKS, add_app=False)
    op.create_index(OLD_INDEX[0], "commerce_orders", OLD_INDEX[1])


def _alter(
    drop_fks: tuple[tuple[str, str, str, list[str]], ...],
    drop_pks: dict[str, tuple[str, list[str]]],
    make_pks: dict[str, tuple[str, list[str]]],
    make_fks: tuple[tuple[str, str, str, list[str]], ...],
    *,
    add_app: bool,
) -> None:
    """PostgreSQL: keys dropped, ``app`` added (the demo app for every row) or dropped, keys
    made again over the new columns."""
    for name, table, _parent, _columns in drop_fks:
        op.drop_constraint(name, table, type_="foreignkey")
    for table, (name, _columns) in drop_pks.items():
        op.drop_constraint(name, table, type_="primary")
    for table in TABLES:
        if add_app:
            op.add_column(table, _app(DEFAULT_APP))
            op.alter_column(table, "app", server_default=None)
        else:
            op.drop_column(table, "app")
    for table, (name, columns) in make_pks.items():
        op.create_primary_key(name, table, columns)
    for name, table, parent, columns in make_fks:
        op.create_foreign_key(name, table, parent, columns, columns)


def _rebuild(*, with_app: bool) -> None:
    """SQLite: every table built anew (with or without ``app``), its rows copied."""
    for table in reversed(TABLES):  # children first: each rename carries the references along
        op.rename_table(table, f"{table}_old")
    _create_tables(with_app=with_app)
    for table in TABLES:
        names = ", ".join(COLUMNS[table])
        if with_app:
            statement = sa.text(
                f"INSERT INTO {table} ({names}, app) SELECT {names}, :app FROM {table}_old"
            ).bindparams(app=DEFAULT_APP)
        else:
            statement = sa.text(f"INSERT INTO {table} ({names}) SELECT {names} FROM {table}_old")
        op.execute(statement)
    for table in reversed(TABLES):
        op.drop_table(f"{table}_old")


def _create_tables(*, with_app: bool) -> None:
    keys = NEW_PKS if with_app else OLD_PKS
    # 0001 named no key on SQLite; this revision names every one.
    fks: dict[str, tuple[str | None, str, list[str]]]
    fks = {table: (name, parent, cols) for name, table, parent, cols in NEW_FKS if with_app}
    fks |= {table: (None, parent, cols) for _n, table, parent, cols in OLD_FKS if not with_app}

    def app() -> list[sa.Column[str]]:
        return [_app()] if with_app else []

    def pk(table: str) -> sa.PrimaryKeyConstraint:
        name, columns = keys[table]
        return sa.PrimaryKeyConstraint(*columns, name=name if with_app else None)

    def fk(table: str) -> sa.ForeignKeyConstraint:
        name, parent, columns = fks[table]
        return sa.ForeignKeyConstraint(columns, [f"{parent}.{c}" for c in columns], name=name)

    op.create_table(
        "commerce_customers",
        sa.Column("customer_id", sa.String(16), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("chargebacks", sa.Integer(), nullable=False),
        *app(),
        pk("commerce_customers"),
    )
    op.create_table(
        "commerce_orders",
        sa.Column("order_id", sa.String(16), nullable=False),
        sa.Column("customer_id", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("ordered_at", UTC_TIME, nullable=False),
        sa.Column("delivered_at", UTC_TIME, nullable=True),
        *app(),
        pk("commerce_orders"),
        fk("commerce_orders"),
    )
    op.create_table(
        "commerce_order_items",
        sa.Column("order_id", sa.String(16), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("sku", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("quantity", sa.Integer(), nullable=False),
        sa.Column("unit_price_cents", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(64), nullable=False),
        sa.Column("final_sale", sa.Boolean(), nullable=False),
        *app(),
        pk("commerce_order_items"),
        fk("commerce_order_items"),
    )
