"""``orders.lookup``'s answer as the one Python type every caller reads it with.

The tool contract's output schema (``specs/tools/orders.lookup.yaml``) is the truth; these
models are checked against it when this module is imported (:func:`~accord.contracts.declared.
shaped_by`), so a field added to the contract and not here, or the other way round, fails the
import and names the field. Date-times are kept as the tool sends them (ISO 8601 strings).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from accord.contracts.declared import shaped_by, tool_field
from accord.contracts.tools import shipped_tool_contracts

TOOL: Final = "orders.lookup"
_OUTPUT: Final[dict[str, Any]] = dict(shipped_tool_contracts()[TOOL].output_schema)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@shaped_by(tool_field(TOOL, "items", output=True)["items"], f"{TOOL} output items[]")
class OrderItem(_Strict):
    sku: str
    name: str
    quantity: int
    unit_price_cents: int
    category: str
    final_sale: bool


@shaped_by(tool_field(TOOL, "refunds", output=True)["items"], f"{TOOL} output refunds[]")
class OrderRefund(_Strict):
    """One refund of the order, as the payments ledger holds it (orders.lookup 1.2)."""

    receipt_id: str
    amount_cents: int
    created_at: str


@shaped_by(_OUTPUT, f"{TOOL} output")
class OrderFacts(_Strict):
    """orders.lookup's output. The refund figures are the payments ledger's (commerce reads them
    from it on every lookup)."""

    order_id: str
    customer_id: str
    status: str
    currency: str
    total_cents: int
    refunded_cents: int
    refundable_cents: int
    ordered_at: str
    delivered_at: str | None
    days_since_delivery: int | None
    final_sale: bool
    items: list[OrderItem]
    refunds: list[OrderRefund] = Field(default_factory=list)  # newest first; [] before 1.2
