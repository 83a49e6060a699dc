"""The payments ledger: exactly-once refunds by idempotency key, never more than was paid, and
never more than the approval threshold paid without an approver.

Payments keeps its own ``payments_orders`` reference table (order owner, currency, total),
seeded from the same seed module as commerce, instead of reading commerce's database:
separate services do not share a database in production. Every row belongs to a tenant app:
customers, orders and keys are per (app, customer), and a call is answered for the app the
server verified (accord.protocol.mcp.access), never for one an argument names.

Guarantees, on SQLite and PostgreSQL alike:

- **Exactly once per key.** ``UNIQUE (app, customer_id, idempotency_key)`` on the ledger is the
  guarantee: a writer that loses the race gets a unique violation, rolls back and reads the
  winner's row (same arguments -> the winner's receipt, replayed; other arguments ->
  IDEMPOTENCY_CONFLICT). Keys are scoped per customer so one tenant can neither block nor
  probe another tenant's keys.
- **Never over-refund, never past the threshold unapproved.** The checks and the insert run in
  one transaction serialised per customer: ``SELECT ... FOR UPDATE`` on every order row of the
  customer (in order_id order, so two writers never deadlock) on PostgreSQL, ``BEGIN
  IMMEDIATE`` on SQLite (one writer for the whole file). Inside it, "refunded so far + amount
  <= total" (else POLICY_DENIED with ``refundable_cents``) and, for a refund no approver
  approved, "paid without an approver + amount < threshold" for the order (ever) and for the
  customer (the last :data:`HISTORY_DAYS` days), else POLICY_DENIED with ``reason:
  approval_required``: the caller asks a person (docs/refund-assistant.md, "Approval by the
  money"). Every refund of the customer takes the same locks, so no sequence and no
  concurrency of requests gets more than the threshold paid without an approver.
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
    PrimaryKeyConstraint,
    Row,
    Select,
    String,
    Table,
    UniqueConstraint,
    and_,
    bindparam,
    func,
    select,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import BindParameter

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.storage.schema import Schema
from accord.protocol.storage.types import UtcDateTime, iso
from accord.tools import seed
from accord.tools.approval_rule import (
    APPROVAL_REQUIRED,
    EXCEEDS_REFUNDABLE,
    HISTORY_DAYS,
    needs_approval,
    threshold_cents,
)
from accord.tools.db import SeededStore
from accord.tools.tenancy import TenantCustomer

metadata = MetaData()

ledger_orders = Table(
    "payments_orders",
    metadata,
    Column("order_id", String(16), nullable=False),
    Column("customer_id", String(16), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("total_cents", Integer, nullable=False),
    Column("app", String(128), nullable=False),  # the tenant app (migration 0002)
    PrimaryKeyConstraint("app", "order_id", name="payments_orders_pk"),
    Index("payments_orders_by_customer", "app", "customer_id"),
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
    Column("app", String(128), nullable=False),  # the tenant app (migration 0002)
    UniqueConstraint("app", "customer_id", "idempotency_key", name="payments_refunds_key"),
    Index("payments_refunds_by_order", "app", "order_id"),
    Index("payments_refunds_by_customer", "app", "customer_id", "created_at"),
)

SCHEMA = Schema(
    name="payments",
    metadata=metadata,
    migrations=Path(__file__).with_name("migrations") / "payments",
    v0_1_table="payments_refunds",
)

_APP: BindParameter[str] = bindparam("app")
_CUSTOMER: BindParameter[str] = bindparam("customer_id")

# Statements built once: SQLAlchemy memoises a statement's cache key, so a prebuilt statement
# with bound parameters skips per-call construction and cache-key work.
BY_KEY = select(refunds).where(
    refunds.c.app == _APP,
    refunds.c.customer_id == _CUSTOMER,
    refunds.c.idempotency_key == bindparam("key"),
)
# Every order of the customer, locked: the per-customer serialisation point of refunds.issue.
CUSTOMER_ORDERS_FOR_UPDATE = (
    select(ledger_orders)
    .where(ledger_orders.c.app == _APP, ledger_orders.c.customer_id == _CUSTOMER)
    .order_by(ledger_orders.c.order_id)
    .with_for_update()
)
_UNAPPROVED = refunds.c.approved_by.is_(None)
_OF_ORDER = refunds.c.order_id == bindparam("order_id")
# What the customer's refunds add up to, in one read under the locks: refunded on the order,
# paid without an approver on the order, and on every order since the window began.
MONEY_SO_FAR = select(
    func.coalesce(func.sum(refunds.c.amount_cents).filter(_OF_ORDER), 0),
    func.coalesce(func.sum(refunds.c.amount_cents).filter(and_(_OF_ORDER, _UNAPPROVED)), 0),
    func.coalesce(
        func.sum(refunds.c.amount_cents).filter(
            and_(_UNAPPROVED, refunds.c.created_at >= bindparam("since", type_=UtcDateTime()))
        ),
        0,
    ),
).where(refunds.c.app == _APP, refunds.c.customer_id == _CUSTOMER)
INSERT = refunds.insert()
COUNT = select(func.count()).select_from(refunds)

# refunds.list: at most this many rows; the count and the sum always cover every match.
LIST_LIMIT = 100


def _listing(by_order: bool, since: bool) -> tuple[Select[Any], Select[Any]]:
    """refunds.list's two statements (count and sum; the rows) for one combination of its
    optional filters, built once: commerce asks on every lookup, and a statement built per call
    costs SQLAlchemy its construction and cache key each time (a third of payments' CPU)."""
    where = [refunds.c.app == _APP, refunds.c.customer_id == _CUSTOMER]
    if by_order:
        where.append(_OF_ORDER)
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
                            "app": seed.APP,
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
                            "app": seed.APP,
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
    async def issue(self, who: TenantCustomer, args: dict[str, Any]) -> dict[str, Any]:
        """``refunds.issue`` for the verified ``who``, arguments validated against the contract
        (``approved_by``: the verified approver, or None)."""
        request = {k: args.get(k) for k in SAME_REQUEST}
        amount = int(args["amount_cents"])  # JSON Schema lets 5.0 through
        request["amount_cents"] = amount
        key = args["idempotency_key"]
        threshold = threshold_cents()
        now = datetime.now(UTC).replace(microsecond=0)
        params = {"app": who.app, "customer_id": who.customer_id}

        def write(conn: Connection) -> dict[str, Any]:
            existing = conn.execute(BY_KEY, {**params, "key": key}).first()
            if existing is not None:
                return _replay(existing, request)
            owned = conn.execute(CUSTOMER_ORDERS_FOR_UPDATE, params).all()
            order = next((o for o in owned if o.order_id == request["order_id"]), None)
            if order is None:
                raise AccordError(
                    ErrorCode.NOT_FOUND, f"no order {request['order_id']} for this customer"
                )
            so_far = {
                **params,
                "order_id": order.order_id,
                "since": seed.days_ago(now, HISTORY_DAYS),
            }
            refunded, order_unapproved, customer_unapproved = (
                int(v) for v in conn.execute(MONEY_SO_FAR, so_far).one()
            )
            refundable = order.total_cents - refunded
            if amount > refundable:
                raise AccordError(
                    ErrorCode.POLICY_DENIED,
                    "the amount exceeds what can still be refunded for this order",
                    {"reason": EXCEEDS_REFUNDABLE, "refundable_cents": max(0, refundable)},
                )
            unapproved = max(order_unapproved, customer_unapproved)
            if request["approved_by"] is None and needs_approval(amount, unapproved, threshold):
                raise AccordError(
                    ErrorCode.POLICY_DENIED,
                    "this refund needs an approver: what was paid without one would reach the "
                    "approval threshold",
                    {
                        "reason": APPROVAL_REQUIRED,
                        "threshold_cents": threshold,
                        "unapproved_cents": unapproved,
                    },
                )
            row = {
                "receipt_id": f"R-{uuid.uuid4().hex[:20].upper()}",
                "app": who.app,
                "customer_id": who.customer_id,
                "idempotency_key": key,
                "currency": order.currency,
                "created_at": now,
                **request,
            }
            try:
                with conn.begin_nested():  # a savepoint: a lost race rolls back this insert only
                    conn.execute(INSERT, row)
            except IntegrityError:
                # Another replica committed this key first (its transaction was not serialised
                # with ours, e.g. another order): the UNIQUE constraint decided, its row answers.
                winner = conn.execute(BY_KEY, {**params, "key": key}).first()
                if winner is None:
                    raise
                return _replay(winner, request)
            return {"receipt": receipt(_Row(row)), "replayed": False}

        return await self.db.write(lambda txn: write(txn.conn))

    async def get(self, who: TenantCustomer, key: str) -> dict[str, Any]:
        """``refunds.get``: another customer's (or app's) key is simply not found."""
        params = {"app": who.app, "customer_id": who.customer_id, "key": key}
        row = await self.db.read(lambda conn: conn.execute(BY_KEY, params).first())
        return {"found": row is not None, "receipt": receipt(row) if row is not None else None}

    async def list_refunds(
        self,
        who: TenantCustomer,
        order_id: str | None = None,
        since_days: int | None = None,
    ) -> dict[str, Any]:
        """``refunds.list``: one customer's refunds, newest first, with their count and sum.

        Read in one snapshot, so the count and the sum agree with the rows listed."""
        totals, listed = LISTINGS[(order_id is not None, since_days is not None)]
        params: dict[str, Any] = {"app": who.app, "customer_id": who.customer_id}
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


class _Row:
    """Attribute access over the dict just inserted, so one ``receipt`` formats both."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


def _replay(row: Row[Any], request: dict[str, Any]) -> dict[str, Any]:
    if any(getattr(row, k) != request[k] for k in SAME_REQUEST):
        raise AccordError(
            ErrorCode.IDEMPOTENCY_CONFLICT,
            "this idempotency key was used with different arguments",
            {"receipt_id": row.receipt_id},
        )
    return {"receipt": receipt(row), "replayed": True}
