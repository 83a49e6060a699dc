"""How much a request refunds, under which key, and what the customer is told about refunds
already paid: the refund workflow's rules of money (issue 13).

- **The amount** is what the customer named (intake's ``amount``: cents, or a percent of what
  is still refundable) when it does not exceed the refundable rest; no amount named means the
  whole rest. An amount above the rest is not refunded: the customer is told the maximum and
  may ask again (refunding more, or less, than they asked would be a decision nobody made).
- **The key** names the request, not only the order: ``refund:<order_id>:<workflow_id>``. A
  retry or a resumed attempt of one request is the same workflow, so the same key (one refund);
  a later request is another workflow, so it may refund what is left. The ledger caps the sum
  of all of them at what was paid (tools/ledger.py).
- **Refunds already paid** come from the payments ledger through ``orders.lookup``: a request
  for an order with nothing left is answered ``already_refunded`` with the original receipt and
  its date; a partly refunded order refunds (at most) what remains, and the answer says so.

The sentences here are the ones this file's outcomes add, in both languages; every other
sentence is models/messages.py's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from accord.agents.models import Language, RequestedAmount
from accord.agents.refund.facts import REFUND_KEY_PREFIX

AMOUNT_ABOVE_LIMIT: Final = "amount_exceeds_limit"
MAX_REFUND_CONSTRAINT: Final = "max_refund_cents"  # the orchestrator contract's constraint
_KEY_PART: Final = re.compile(r"[A-Za-z0-9._-]{1,96}")

SENTENCES: Final[Mapping[str, Mapping[Language, str]]] = MappingProxyType(
    {
        "already_refunded": MappingProxyType(
            {
                Language.EN: "Order {order_id} has already been refunded in full: {amount} on "
                "{date} (receipt {receipt_id}). Nothing is left to refund.",
                Language.ZH: "订单 {order_id} 已于 {date} 全额退款 {amount}（退款单号 "
                "{receipt_id}），没有可再退的金额。",
            }
        ),
        "amount_above_refundable": MappingProxyType(
            {
                Language.EN: "You asked for {requested}, but at most {refundable} can still be "
                "refunded on order {order_id}. Nothing was refunded; ask again for up to "
                "{refundable}.",
                Language.ZH: "您申请退款 {requested}，但订单 {order_id} 最多还能退 {refundable}。"
                "本次未退款，您可以重新申请不超过 {refundable} 的金额。",
            }
        ),
        "amount_above_limit": MappingProxyType(
            {
                Language.EN: "The refund of {amount} on order {order_id} is above the limit of "
                "{limit} this request was given. Nothing was refunded.",
                Language.ZH: "订单 {order_id} 的退款 {amount} 超过了本次请求设定的上限 {limit}，"
                "本次未退款。",
            }
        ),
        "refunded_before": MappingProxyType(
            {
                Language.EN: "{refunded} of order {order_id} was already refunded before; "
                "{refundable} remained.",
                Language.ZH: "订单 {order_id} 此前已退款 {refunded}，剩余可退 {refundable}。",
            }
        ),
    }
)


def sentence(code: str, language: Language, **params: Any) -> str:
    return SENTENCES[code][language].format(**params)


def refund_key(order_id: str, request_id: str) -> str:
    """The idempotency key of this request's refund of ``order_id``: a retry of the request is
    one refund, a later request is another (see the module docstring). A request id outside the
    key alphabet (or too long for the contract's 128 characters) is hashed."""
    part = request_id if _KEY_PART.fullmatch(request_id) else _digest(request_id)
    return f"{REFUND_KEY_PREFIX}{order_id}:{part}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def requested_cents(amount: RequestedAmount | None, refundable_cents: int) -> int | None:
    """The cents the customer asked for (None: they named no amount, so the whole rest). A
    percent is of what is still refundable, rounded down, at least one cent."""
    if amount is None:
        return None
    if amount.cents is not None:
        return amount.cents
    if amount.percent is not None:
        return max(1, refundable_cents * amount.percent // 100)
    return None
