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
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from accord.protocol.auth.names import DEFAULT_APP
from accord.refund_contracts.domain import OrderStatus

CURRENCY: Final = "USD"
# Every demo row is the demo app's: another app's C-01 has none of them.
APP: Final = DEFAULT_APP


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


CUSTOMERS: Final = (
    Customer("C-01", "Ada Lin", 420),
    Customer("C-02", "Bo Chen", 210),
    Customer("C-03", "Chidi Okafor", 45),
    Customer("C-04", "Dana Wu", 130),
    Customer("C-90", "Contract Probe", 400),  # the contract test kit's (probes.py)
)


def _one(sku: str, name: str, cents: int, category: str, final_sale: bool = False) -> tuple[Item]:
    return (Item(sku, name, 1, cents, category, final_sale),)


ORDERS: Final = (
    Order("O-1001", "C-01", 8, 5, _one("EAR-100", "Wireless earbuds", 5999, "electronics")),
    Order("O-1002", "C-01", 64, 60, _one("SHO-220", "Running shoes", 8900, "apparel")),
    Order(
        "O-1003",
        "C-02",
        9,
        6,
        _one("JKT-330", "Clearance rain jacket", 4500, "apparel", final_sale=True),
    ),
    Order("O-1004", "C-03", 6, 3, _one("LAP-900", "Laptop Pro 16", 129900, "electronics")),
    Order("O-1005", "C-01", 4, 2, _one("MUG-050", "Ceramic mug", 3500, "kitchen")),
    Order("O-1006", "C-04", 7, 4, _one("SPK-120", "Bluetooth speaker", 12000, "electronics")),
    # C-04's recent orders, each refunded in full (see PAST_REFUNDS).
    Order("O-2001", "C-04", 85, 80, _one("HDP-210", "Headphones", 4999, "electronics")),
    Order("O-2002", "C-04", 70, 66, _one("WAT-330", "Smart watch", 7500, "electronics")),
    Order("O-2003", "C-04", 50, 47, _one("BAG-140", "Travel backpack", 3200, "accessories")),
    Order("O-2004", "C-04", 33, 30, _one("CAM-510", "Action camera", 15000, "electronics")),
    Order("O-2005", "C-04", 18, 15, _one("LMP-070", "Desk lamp", 2500, "home")),
    # The contract test kit's: refunded a cent at a time by `accord contract-test` (probes.py).
    Order("O-9001", "C-90", 30, 25, _one("PRB-001", "Contract test credit", 10_000_000, "probe")),
)

PAST_REFUNDS: Final = (
    PastRefund("R-SEED-2001", "O-2001", "C-04", 4999, 77),
    PastRefund("R-SEED-2002", "O-2002", "C-04", 7500, 63),
    PastRefund("R-SEED-2003", "O-2003", "C-04", 3200, 44),
    PastRefund("R-SEED-2004", "O-2004", "C-04", 15000, 27),
    PastRefund("R-SEED-2005", "O-2005", "C-04", 2500, 12),
)


def days_ago(now: datetime, days: int) -> datetime:
    return (now - timedelta(days=days)).replace(microsecond=0)
