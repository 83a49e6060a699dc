"""The receipt a person reads: the orchestrator's text artifact ``receipt`` next to the data
artifact ``result`` of a refund that was paid, in the customer's language.

It is rendered from the result's receipt (the payments ledger's own record) when the task is
read, not stored: the workflow log stays the one truth, and the text follows the message table
(accord.agents.models.messages).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accord.agents.models.base import Language
from accord.agents.models.intake import detect_language
from accord.agents.models.messages import say
from accord.agents.models.money_text import money


def customer_language(text: str) -> Language:
    """The language the customer wrote in (English when the text tells neither)."""
    return detect_language(text) or Language.EN


def receipt_text(result: Mapping[str, Any], language: Language) -> str | None:
    """The receipt of a refunded result, or None when nothing was paid (no receipt)."""
    receipt = result.get("receipt")
    if not isinstance(receipt, Mapping) or not receipt.get("receipt_id"):
        return None
    cents = receipt.get("amount_cents")
    lines = [
        say(
            "receipt",
            language,
            receipt_id=receipt.get("receipt_id"),
            order_id=receipt.get("order_id"),
            amount=money(
                cents if isinstance(cents, int) else None, receipt.get("currency"), language
            ),
            date=str(receipt.get("created_at") or "")[:10] or None,
        )
    ]
    if receipt.get("approved_by"):
        lines.append(say("receipt.approved_by", language, approver=receipt["approved_by"]))
    return "\n".join(lines)
