"""Commerce storage: customers and orders with items, per tenant app. No refunds.

Every row belongs to an app (the tenant's, as the server verified it): customer C-01 of app
``shop`` is another person than C-01 of the demo app, and an order of another app is
NOT_FOUND exactly like no order (migration 0003 gave the rows v0.2 left the demo app).

Money paid back is the payments ledger's alone: commerce reads it over MCP (``refunds.list``,
tools/ledger_view.py) when it answers, and combines it here (:func:`order_view`). Its own
``commerce_refunds`` table (a copy that never learned of a new refund) was dropped by
migration 0002. Tables are prefixed ``commerce_`` so one PostgreSQL database can hold every
service.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Row,
    String,
    Table,
    bindparam,
    func,
    select,
)

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.storage.schema import Schema
from accord.protocol.storage.types import UtcDateTime, iso
from accord.tools import seed
from accord.tools.approval_rule import HISTORY_DAYS
from accord.tools.db import SeededStore
from accord.tools.tenancy import TenantCustomer

metadata = MetaData()

customers = Table(
    "commerce_customers",
    metadata,
    Column("customer_id", String(16), nullable=False),
    Column("name", String(200), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("chargebacks", Integer, nullable=False, default=0),
    Column("app", String(128), nullable=False),  # the tenant app (migration 0003)
    PrimaryKeyConstraint("app", "customer_id", name="commerce_customers_pk"),
)

orders = Table(
    "commerce_orders",
    metadata,
    Column("order_id", String(16), nullable=False),
    Column("customer_id", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("ordered_at", UtcDateTime(), nullable=False),
    Column("delivered_at", UtcDateTime(), nullable=True),
    Column("app", String(128), nullable=False),  # the tenant app (migration 0003)
    PrimaryKeyConstraint("app", "order_id", name="commerce_orders_pk"),
    ForeignKeyConstraint(
        ["app", "customer_id"],
        ["commerce_customers.app", "commerce_customers.customer_id"],
        name="commerce_orders_customer_fk",
    ),
    Index("commerce_orders_by_customer", "app", "customer_id"),
)

order_items = Table(
    "commerce_order_items",
    metadata,
    Column("order_id", String(16), nullable=False),
    Column("line", Integer, nullable=False, autoincrement=False),
    Column("sku", String(64), nullable=False),
    Column("name", String(200), nullable=False),
    Column("quantity", Integer, nullable=False),
    Column("unit_price_cents", Integer, nullable=False),
    Column("category", String(64), nullable=False),
    Column("final_sale", Boolean, nullable=False),
    Column("app", String(128), nullable=False),  # the tenant app (migration 0003)
    PrimaryKeyConstraint("app", "order_id", "line", name="commerce_order_items_pk"),
    ForeignKeyConstraint(
        ["app", "order_id"],
        ["commerce_orders.app", "commerce_orders.order_id"],
        name="commerce_order_items_order_fk",
    ),
)

SCHEMA = Schema(
    name="commerce",
    metadata=metadata,
    migrations=Path(__file__).with_name("migrations") / "commerce",
    v0_1_table="commerce_orders",
)

# One round trip per lookup: the order and its items, owner-scoped.
LOOKUP = (
    select(
        orders,
        order_items.c.sku,
        order_items.c.name,
        order_items.c.quantity,
        order_items.c.unit_price_cents,
        order_items.c.category,
        order_items.c.final_sale,
    )
    .join(
        order_items,
        (order_items.c.app == orders.c.app) & (order_items.c.order_id == orders.c.order_id),
    )
    .where(
        orders.c.app == bindparam("app"),
        orders.c.order_id == bindparam("order_id"),
        orders.c.customer_id == bindparam("customer_id"),
    )
    .order_by(order_items.c.line)
)


class CommerceStore(SeededStore):
    """Owns the commerce database: schema, seed data, and the queries behind the tools."""

    schema = SCHEMA

    async def seed(self, now: datetime) -> None:
        def insert(conn: Connection) -> None:
            conn.execute(
                self.insert_ignore(
                    customers,
                    [
                        {
                            "app": seed.APP,
                            "customer_id": c.customer_id,
                            "name": c.name,
                            "created_at": seed.days_ago(now, c.account_age_days),
                            "chargebacks": c.chargebacks,
                        }
                        for c in seed.CUSTOMERS
                    ],
                )
            )
            conn.execute(
                self.insert_ignore(
                    orders,
                    [
                        {
                            "app": seed.APP,
                            "order_id": o.order_id,
                            "customer_id": o.customer_id,
                            "status": o.status,
                            "currency": seed.CURRENCY,
                            "ordered_at": seed.days_ago(now, o.ordered_days_ago),
                            "delivered_at": None
                            if o.delivered_days_ago is None
                            else seed.days_ago(now, o.delivered_days_ago),
                        }
                        for o in seed.ORDERS
                    ],
                )
            )
            conn.execute(
                self.insert_ignore(
                    order_items,
                    [
                        {
                            "app": seed.APP,
                            "order_id": o.order_id,
                            "line": n,
                            "sku": i.sku,
                            "name": i.name,
                            "quantity": i.quantity,
                            "unit_price_cents": i.unit_price_cents,
                            "category": i.category,
                            "final_sale": i.final_sale,
                        }
                        for o in seed.ORDERS
                        for n, i in enumerate(o.items, start=1)
                    ],
                )
            )

        await self.db.write(lambda txn: insert(txn.conn))

    # -- queries ---------------------------------------------------------------------------------
    async def lookup_order(self, order_id: str, who: TenantCustomer) -> Sequence[Row[Any]]:
        """The rows behind ``orders.lookup``: another customer's (or app's) order is NOT_FOUND,
        exactly like no order (and is refused before the ledger is asked about it)."""
        params = {"app": who.app, "order_id": order_id, "customer_id": who.customer_id}
        rows = await self.db.read(lambda conn: conn.execute(LOOKUP, params).all())
        if not rows:
            raise _no_order(order_id)
        return rows

    async def customer_history(
        self, who: TenantCustomer, *, of_order: str | None = None
    ) -> dict[str, Any]:
        """``customers.history`` without the refund figures (those are the ledger's).

        ``of_order``: ``orders.customer_history``, the same answer only when that order is the
        customer's (NOT_FOUND otherwise, worded as ``orders.lookup`` words it), in the same
        read, and so before the ledger is asked about the customer."""
        now = datetime.now(UTC)
        since = seed.days_ago(now, HISTORY_DAYS)

        def query(conn: Connection) -> dict[str, Any] | None:
            params = {
                "app": who.app,
                "customer_id": who.customer_id,
                "since": since,
                "order_id": of_order,
            }
            if of_order is not None and conn.execute(OWNED, params).first() is None:
                raise _no_order(of_order)
            customer = conn.execute(CUSTOMER, params).first()
            if customer is None:
                return None
            order_counts = conn.execute(ORDER_COUNTS, params).one()
            return {
                "customer_id": who.customer_id,
                "account_age_days": max(0, (now - customer.created_at).days),
                "orders_total": int(order_counts[0]),
                "orders_90d": int(order_counts[1]),
                "chargebacks": int(customer.chargebacks),
            }

        found = await self.db.read(query, snapshot=True)
        if found is None:
            raise AccordError(ErrorCode.NOT_FOUND, f"no customer {who.customer_id}")
        return found


def _no_order(order_id: str) -> AccordError:
    """Another customer's order and no order at all read the same (no data leaks)."""
    return AccordError(ErrorCode.NOT_FOUND, f"no order {order_id} for this customer")


CUSTOMER = select(customers).where(
    customers.c.app == bindparam("app"), customers.c.customer_id == bindparam("customer_id")
)
OWNED = select(orders.c.order_id).where(
    orders.c.app == bindparam("app"),
    orders.c.order_id == bindparam("order_id"),
    orders.c.customer_id == bindparam("customer_id"),
)
ORDER_COUNTS = select(
    func.count(), func.count().filter(orders.c.ordered_at >= bindparam("since"))
).where(orders.c.app == bindparam("app"), orders.c.customer_id == bindparam("customer_id"))


def order_view(
    rows: Sequence[Row[Any]], paid_back: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """``orders.lookup``'s answer: the order's rows plus the ledger's ``refunds.list`` for it."""
    first = rows[0]
    items = [
        {
            "sku": r.sku,
            "name": r.name,
            "quantity": r.quantity,
            "unit_price_cents": r.unit_price_cents,
            "category": r.category,
            "final_sale": bool(r.final_sale),
        }
        for r in rows
    ]
    total = sum(i["quantity"] * i["unit_price_cents"] for i in items)
    refunded = int(paid_back["total_cents"])
    delivered: datetime | None = first.delivered_at
    return {
        "order_id": first.order_id,
        "customer_id": first.customer_id,
        "status": first.status,
        "currency": first.currency,
        "total_cents": total,
        "refunded_cents": refunded,
        "refundable_cents": max(0, total - refunded),
        "ordered_at": iso(first.ordered_at),
        "delivered_at": iso(delivered) if delivered is not None else None,
        "days_since_delivery": None if delivered is None else max(0, (now - delivered).days),
        "final_sale": any(i["final_sale"] for i in items),
        "items": items,
        "refunds": [
            {k: r[k] for k in ("receipt_id", "amount_cents", "created_at")}
            for r in paid_back["refunds"]
        ],
    }
