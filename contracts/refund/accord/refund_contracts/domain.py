"""The refund domain's shared vocabulary, as the shipped contract files declare it.

Id formats and enums are written once, in the YAML specs (``specs/tools``, ``specs/agents``),
and read from there by everything else: models, policy rules, the orchestrator, the tools.

    id formats   ORDER_ID_PATTERN, CUSTOMER_ID_PATTERN     the specs' JSON Schema ``pattern``
                 ORDER_ID, CUSTOMER_ID                    the same, compiled (use fullmatch)
    enums        RefundReason, PolicyRule, RiskLevel,     the specs' ``enum``, member by member
                 OrderStatus, RefundDecision, ApprovalDecision

    models       OrderFacts and its parts                  (accord.refund_contracts.orders)

An enum is a Python class so that code can name its members (``RefundReason.DAMAGED``) and the
type checker can see them; each is checked against its spec when this module is imported, so a
spec and its class cannot drift apart: the import fails and names both (the framework's
accord.contracts.declared reads any other declared field).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Final

from accord.contracts.declared import declared_by, enum_of, pattern_of, skill_field, tool_field

# -- id formats -------------------------------------------------------------------------------

ORDER_ID_PATTERN: Final = pattern_of(tool_field("orders.lookup", "order_id"))
"""An order id the tools accept (``O-1001``)."""

CUSTOMER_ID_PATTERN: Final = pattern_of(tool_field("orders.lookup", "customer_id"))
"""A customer id (``C-01``): the subject of a customer's credential."""

ORDER_ID: Final = re.compile(ORDER_ID_PATTERN)
CUSTOMER_ID: Final = re.compile(CUSTOMER_ID_PATTERN)


def is_order_id(value: str) -> bool:
    return ORDER_ID.fullmatch(value) is not None


def is_customer_id(value: str) -> bool:
    return CUSTOMER_ID.fullmatch(value) is not None


# -- enums ------------------------------------------------------------------------------------


@declared_by(enum_of(skill_field("policy-check", "refund.policy", "reason")))
class RefundReason(StrEnum):
    """Why the customer wants a refund."""

    WRONG_SIZE = "wrong_size"
    DAMAGED = "damaged"
    NOT_AS_DESCRIBED = "not_as_described"
    CHANGED_MIND = "changed_mind"
    LATE_DELIVERY = "late_delivery"
    OTHER = "other"


@declared_by(enum_of(skill_field("policy-check", "refund.policy", "rule", output=True)))
class PolicyRule(StrEnum):
    """The policy rule that decided a refund."""

    WITHIN_WINDOW = "within_window"
    OUTSIDE_WINDOW = "outside_window"
    FINAL_SALE = "final_sale"
    ALREADY_REFUNDED = "already_refunded"
    NOT_DELIVERED = "not_delivered"
    AMOUNT_EXCEEDS_REFUNDABLE = "amount_exceeds_refundable"
    DAMAGE_WITH_EVIDENCE = "damage_with_evidence"


@declared_by(enum_of(skill_field("risk-check", "refund.risk", "risk", output=True)))
class RiskLevel(StrEnum):
    LOW = "low"
    HIGH = "high"


@declared_by(enum_of(tool_field("orders.lookup", "status", output=True)))
class OrderStatus(StrEnum):
    PROCESSING = "processing"
    SHIPPED = "shipped"
    DELIVERED = "delivered"
    CANCELED = "canceled"


@declared_by(enum_of(skill_field("orchestrator", "refund.request", "decision", output=True)))
class RefundDecision(StrEnum):
    """How a refund request ended."""

    REFUNDED = "refunded"
    REJECTED = "rejected"  # an approver said no
    NOT_ELIGIBLE = "not_eligible"
    ALREADY_REFUNDED = "already_refunded"  # nothing left: answered with the original receipt
    NO_REFUND_REQUESTED = "no_refund_requested"  # not a refund request: answered and ended
    NOT_UNDERSTOOD = "not_understood"  # asked three times without a usable answer


@declared_by(enum_of(skill_field("orchestrator", "refund.approve", "decision")))
class ApprovalDecision(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


class PaymentRefusal(StrEnum):
    """``details.reason`` of refunds.issue's POLICY_DENIED (its contract's description): what
    the caller does next. Nothing was paid in either case."""

    APPROVAL_REQUIRED = "approval_required"  # ask an approver, then send it with the approver
    EXCEEDS_REFUNDABLE = "exceeds_refundable"  # more than is left (details.refundable_cents)
