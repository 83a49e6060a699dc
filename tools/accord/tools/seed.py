"""Demo data shared by the commerce and payments servers, with dates relative to "now".

Both servers seed from this one module (each into its own tables), so payments knows the same
order totals and the same past refunds that commerce reports. All of it belongs to the demo
app (:data:`APP`); customers and orders are kept per app. Seeding is idempotent: rows are
inserted with ON CONFLICT DO NOTHING, so a restart keeps the dates of the first start.

The cases the refund assistant is exercised with:

- O-1001 C-01  5999 delivered 5 days ago: refundable, low risk
- O-1002 C-01  8900 delivered 60 days ago: outside the 30-day window
- O-1003 C-02  a final-sale item
- O-1004 C-03  129900 delivered 3 days ago: high risk by amount
- O-1005 C-01  3500 delivered 2 days ago, a mug: a damage claim needs evidence
- O-1006 C-04  12000 delivered 4 days ago; C-04 had five refunds in the last 90 days
- O-9001 C-90  the contract test kit's own order (100,000.00): ``accord contract-test`` refunds
  one cent of it per run under a key of its own, so the kit never depends on what a
  walkthrough or a customer refunded before (it stays refundable for ten million runs)

The rows themselves are data, in ``seed_data.json`` beside this module: the Java commerce
server (tools/java/commerce) reads the same file, so both languages answer from one record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from accord.protocol.auth.names import DEFAULT_APP
from accord.refund_contracts.domain import OrderStatus

DATA_FILE: Final = Path(__file__).with_name("seed_data.json")
_DATA: Final[dict[str, Any]] = json.loads(DATA_FILE.read_text(encoding="utf-8"))

CURRENCY: Final[str] = _DATA["currency"]
# Every demo row is the demo app's: another app's C-01 has none of them.
APP: Final = DEFAULT_APP
if _DATA["app"] != APP:  # the Java server reads the app from the file: the two must agree
    raise RuntimeError(f"{DATA_FILE} names app {_DATA['app']!r}, not {APP!r}")


@dataclass(frozen=True)
class Customer:
    customer_id: str
    name: str
    account_age_days: int
    chargebacks: int = 0


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    quantity: int
    unit_price_cents: int
    category: str
    final_sale: bool = False


@dataclass(frozen=True)
class Order:
    order_id: str
    customer_id: str
    ordered_days_ago: int
    delivered_days_ago: int | None
    items: tuple[Item, ...]
    status: str = OrderStatus.DELIVERED.value

    @property
    def total_cents(self) -> int:
        return sum(i.quantity * i.unit_price_cents for i in self.items)


@dataclass(frozen=True)
class PastRefund:
    """A refund paid before the demo starts (the history behind customers.history)."""

    refund_id: str
    order_id: str
    customer_id: str
    amount_cents: int
    days_ago: int

    @property
    def idempotency_key(self) -> str:
        return f"seed:{self.refund_id}"


CUSTOMERS: Final = tuple(Customer(**c) for c in _DATA["customers"])
ORDERS: Final = tuple(
    Order(**{**o, "items": tuple(Item(**i) for i in o["items"])}) for o in _DATA["orders"]
)
PAST_REFUNDS: Final = tuple(PastRefund(**r) for r in _DATA["past_refunds"])


def days_ago(now: datetime, days: int) -> datetime:
    return (now - timedelta(days=days)).replace(microsecond=0)
