"""The payments ledger: exactly-once refunds by idempotency key, never more than was paid.

Payments keeps its own ``payments_orders`` reference table (order owner, currency, total),
seeded from the same seed module as commerce, instead of reading commerce's database:
separate services do not share a database in production.

Guarantees, on SQLite and PostgreSQL alike:

- **Exactly once per key.** ``UNIQUE (customer_id, idempotency_key)`` on the ledger is the
  guarantee: a writer that loses the race gets a unique violation, rolls back and reads the
  winner's row (same arguments -> the winner's receipt, replayed; other arguments ->
  IDEMPOTENCY_CONFLICT). Keys are scoped per customer so one tenant can neither block nor
  probe another tenant's keys.
- **Never over-refund.** The check "refunded so far + amount <= total" and the insert run in
  one transaction serialised per order: ``SELECT ... FOR UPDATE`` on the order row on
  PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite (one writer for the whole file).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from sqlalchemy import (
    Column,
    Connection,
    Index,
    Integer,
    MetaData,
    Row,
    Select,
    String,
    Table,
    UniqueConstraint,
    bindparam,
    func,
    select,
)
from sqlalchemy.exc import IntegrityError

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.storage.schema import Schema
from accord.protocol.storage.types import UtcDateTime, iso
from accord.tools import seed
from accord.tools.db import SeededStore

metadata = MetaData()

ledger_orders = Table(
    "payments_orders",
    metadata,
    Column("order_id", String(16), primary_key=True),
    Column("customer_id", String(16), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("total_cents", Integer, nullable=False),
)

refunds = Table(
    "payments_refunds",
    metadata,
    Column("receipt_id", String(40), primary_key=True),
    Column("customer_id", String(16), nullable=False),
    Column("idempotency_key", String(128), nullable=False),
    Column("order_id", String(16), nullable=False),
    Column("amount_cents", Integer, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("reason", String(500), nullable=False),
    Column("approved_by", String(128), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    UniqueConstraint("customer_id", "idempotency_key", name="payments_refunds_key"),
    Index("payments_refunds_by_order", "order_id"),
)

SCHEMA = Schema(
    name="payments",
    metadata=metadata,
    migrations=Path(__file__).with_name("migrations") / "payments",
    v0_1_table="payments_refunds",
)

# Statements built once: SQLAlchemy memoises a statement's cache key, so a prebuilt statement
# with bound parameters skips per-call construction and cache-key work.
BY_KEY = select(refunds).where(
    refunds.c.customer_id == bindparam("customer_id"), refunds.c.idempotency_key == bindparam("key")
)
ORDER_FOR_UPDATE = (
    select(ledger_orders).where(ledger_orders.c.order_id == bindparam("order_id")).with_for_update()
)
REFUNDED = select(func.coalesce(func.sum(refunds.c.amount_cents), 0)).where(
    refunds.c.order_id == bindparam("order_id")
)
INSERT = refunds.insert()
COUNT = select(func.count()).select_from(refunds)

# refunds.list: at most this many rows; the count and the sum always cover every match.
LIST_LIMIT = 100


def _listing(by_order: bool, since: bool) -> tuple[Select[Any], Select[Any]]:
    """refunds.list's two statements (count and sum; the rows) for one combination of its
    optional filters, built once: commerce asks on every lookup, and a statement built per call
    costs SQLAlchemy its construction and cache key each time (a third of payments' CPU)."""
    where = [refunds.c.customer_id == bindparam("customer_id")]
    if by_order:
        where.append(refunds.c.order_id == bindparam("order_id"))
    if since:
        where.append(refunds.c.created_at >= bindparam("since", type_=UtcDateTime()))
    totals = select(func.count(), func.coalesce(func.sum(refunds.c.amount_cents), 0)).where(*where)
    rows = (
        select(refunds)
        .where(*where)
        .order_by(refunds.c.created_at.desc(), refunds.c.receipt_id)
        .limit(LIST_LIMIT)
    )
    return totals, rows


LISTINGS: Final = {(o, d): _listing(o, d) for o in (False, True) for d in (False, True)}

# What makes two calls with one key "the same request".
SAME_REQUEST = ("order_id", "amount_cents", "reason", "approved_by")


def receipt(row: Any) -> dict[str, Any]:
    return {
        "receipt_id": row.receipt_id,
        "idempotency_key": row.idempotency_key,
        "order_id": row.order_id,
        "customer_id": row.customer_id,
        "amount_cents": row.amount_cents,
        "currency": row.currency,
        "reason": row.reason,
        "approved_by": row.approved_by,
        "created_at": iso(row.created_at),
    }


class Ledger(SeededStore):
    """Owns the payments database: schema, seed data, issuing and finding refunds."""

    schema = SCHEMA

    async def seed(self, now: datetime) -> None:
        orders_by_id = {o.order_id: o for o in seed.ORDERS}

        def insert(conn: Connection) -> None:
            conn.execute(
                self.insert_ignore(
                    ledger_orders,
                    [
                        {
                            "order_id": o.order_id,
                            "customer_id": o.customer_id,
                            "currency": seed.CURRENCY,
                            "total_cents": o.total_cents,
                        }
                        for o in seed.ORDERS
                    ],
                )
            )
            conn.execute(
                self.insert_ignore(
                    refunds,
                    [
                        {
                            "receipt_id": r.refund_id,
                            "customer_id": r.customer_id,
                            "idempotency_key": r.idempotency_key,
                            "order_id": r.order_id,
                            "amount_cents": r.amount_cents,
                            "currency": seed.CURRENCY,
                            "reason": f"refund of {orders_by_id[r.order_id].items[0].name}",
                            "approved_by": None,
                            "created_at": seed.days_ago(now, r.days_ago),
                        }
                        for r in seed.PAST_REFUNDS
                    ],
                )
            )

        await self.db.write(lambda txn: insert(txn.conn))

    # -- tools -----------------------------------------------------------------------------------
    async def issue(self, args: dict[str, Any]) -> dict[str, Any]:
        """``refunds.issue`` with arguments already validated against the contract."""
        request = {k: args.get(k) for k in SAME_REQUEST}
        request["amount_cents"] = int(args["amount_cents"])  # JSON Schema lets 5.0 through
        customer_id, key = args["customer_id"], args["idempotency_key"]

        def write(conn: Connection) -> dict[str, Any]:
            existing = _by_key(conn, customer_id, key)
            if existing is not None:
                return _replay(existing, request)
            order = conn.execute(ORDER_FOR_UPDATE, {"order_id": request["order_id"]}).first()
            if order is None or order.customer_id != customer_id:
                raise AccordError(
                    ErrorCode.NOT_FOUND, f"no order {request['order_id']} for this customer"
                )
            refunded = conn.execute(REFUNDED, {"order_id": order.order_id}).scalar_one()
            refundable = order.total_cents - int(refunded)
            if request["amount_cents"] > refundable:
                raise AccordError(
                    ErrorCode.POLICY_DENIED,
                    "the amount exceeds what can still be refunded for this order",
                    {"refundable_cents": max(0, refundable)},
                )
            row = {
                "receipt_id": f"R-{uuid.uuid4().hex[:20].upper()}",
                "customer_id": customer_id,
                "idempotency_key": key,
                "currency": order.currency,
                "created_at": datetime.now(UTC).replace(microsecond=0),
                **request,
            }
            try:
                with conn.begin_nested():  # a savepoint: a lost race rolls back this insert only
                    conn.execute(INSERT, row)
            except IntegrityError:
                # Another replica committed this key first (its transaction was not serialised
                # with ours, e.g. another order): the UNIQUE constraint decided, its row answers.
                winner = _by_key(conn, customer_id, key)
                if winner is None:
                    raise
                return _replay(winner, request)
            return {"receipt": receipt(_Row(row)), "replayed": False}

        return await self.db.write(lambda txn: write(txn.conn))

    async def get(self, customer_id: str, key: str) -> dict[str, Any]:
        """``refunds.get``: another customer's key is simply not found."""
        row = await self.db.read(lambda conn: _by_key(conn, customer_id, key))
        return {"found": row is not None, "receipt": receipt(row) if row is not None else None}

    async def list_refunds(
        self, customer_id: str, order_id: str | None = None, since_days: int | None = None
    ) -> dict[str, Any]:
        """``refunds.list``: one customer's refunds, newest first, with their count and sum.

        Read in one snapshot, so the count and the sum agree with the rows listed."""
        totals, listed = LISTINGS[(order_id is not None, since_days is not None)]
        params: dict[str, Any] = {"customer_id": customer_id}
        if order_id is not None:
            params["order_id"] = order_id
        if since_days is not None:
            params["since"] = seed.days_ago(datetime.now(UTC), since_days)

        def query(conn: Connection) -> dict[str, Any]:
            count, total = conn.execute(totals, params).one()
            rows = conn.execute(listed, params).all()
            return {
                "count": int(count),
                "total_cents": int(total),
                "refunds": [receipt(r) for r in rows],
            }

        return await self.db.read(query, snapshot=True)

    async def count(self) -> int:
        return await self.db.read(lambda conn: int(conn.execute(COUNT).scalar_one()))


def _by_key(conn: Connection, customer_id: str, key: str) -> Row[Any] | None:
    return conn.execute(BY_KEY, {"customer_id": customer_id, "key": key}).first()


class _Row:
    """Attribute access over the dict just inserted, so one ``receipt`` formats both."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


def _replay(row: Any, request: dict[str, Any]) -> dict[str, Any]:
    if any(getattr(row, k) != request[k] for k in SAME_REQUEST):
        raise AccordError(
            ErrorCode.IDEMPOTENCY_CONFLICT,
            "this idempotency key was used with different arguments",
            {"receipt_id": row.receipt_id},
        )
    return {"receipt": receipt(row), "replayed": True}
