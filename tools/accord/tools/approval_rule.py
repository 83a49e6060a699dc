"""Approval by the money, not the message: the rule payments enforces and commerce reports.

A refund no approver approved is paid only while what was paid without an approver, plus this
refund, stays below the approval threshold (``ACCORD_APPROVAL_THRESHOLD_CENTS``, the one
setting risk-check's ``large_amount`` reads too, for a single request), for the order (all its
refunds) and for the
customer (the last :data:`HISTORY_DAYS` days, the window of customers.history and of the risk
rules). Judged per message, $499 + $499 + $301 of one laptop each passed a 500.00 threshold;
judged on the money, the second already needs a person.
"""

from __future__ import annotations

from typing import Final

from accord.protocol.settings import app_settings
from accord.refund_contracts.domain import PaymentRefusal
from accord.refund_contracts.settings import AssistantSettings

# The window of customers.history (orders and refunds of the last 90 days) and of the
# customer's total paid without an approver.
HISTORY_DAYS: Final = 90
# POLICY_DENIED's machine-readable ``reason`` from refunds.issue: ask an approver, then send
# the same refund again with the approver in the delegation; or more than the order has left.
APPROVAL_REQUIRED: Final = PaymentRefusal.APPROVAL_REQUIRED.value
EXCEEDS_REFUNDABLE: Final = PaymentRefusal.EXCEEDS_REFUNDABLE.value


def threshold_cents() -> int:
    """The approval threshold this process is configured with."""
    return app_settings(AssistantSettings).approval_threshold_cents


def needs_approval(amount_cents: int, unapproved_cents: int, threshold: int) -> bool:
    """True when paying ``amount_cents`` without an approver would bring what was paid without
    one (``unapproved_cents``, the larger of the order's and the customer's) to the threshold
    or past it (a single refund of the threshold itself needs an approver, as ``large_amount``
    says)."""
    return unapproved_cents + amount_cents >= threshold
