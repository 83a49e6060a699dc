"""The refund domain's shared vocabulary, as the shipped contract files declare it.

Id formats and enums are written once, in the YAML specs (``specs/tools``, ``specs/agents``),
and read from there by everything else: models, policy rules, the orchestrator, the tools.

    id formats   ORDER_ID_PATTERN, CUSTOMER_ID_PATTERN     the specs' JSON Schema ``pattern``
                 ORDER_ID, CUSTOMER_ID                    the same, compiled (use fullmatch)
    enums        RefundReason, PolicyRule, RiskLevel,     the specs' ``enum``, member by member
                 OrderStatus, RefundDecision, ApprovalDecision

    models       shaped_by(schema)                         a model's fields are the schema's
                                                           (accord.contracts.orders)

An enum is a Python class so that code can name its members (``RefundReason.DAMAGED``) and the
type checker can see them; each is checked against its spec when this module is imported, so a
spec and its class cannot drift apart: the import fails and names both. Accessors
(:func:`tool_field`, :func:`skill_field`, :func:`pattern_of`, :func:`enum_of`) read any other
declared field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final, TypeVar

from pydantic import BaseModel

from accord.contracts.agents import AgentContract, shipped_agent_contracts
from accord.contracts.tools import ToolContract, shipped_tool_contracts

_TOOLS: Final[Mapping[str, ToolContract]] = shipped_tool_contracts()
_AGENTS: Final[Mapping[str, AgentContract]] = shipped_agent_contracts()

E = TypeVar("E", bound=StrEnum)
B = TypeVar("B", bound=BaseModel)


class DeclarationError(ValueError):
    """Code names a field, pattern or enum the shipped specs do not declare, or disagrees with
    them."""


def field_of(schema: Mapping[str, Any], field: str, where: str) -> Mapping[str, Any]:
    """The JSON Schema of top-level property ``field`` of an object schema."""
    props = schema.get("properties")
    found = props.get(field) if isinstance(props, Mapping) else None
    if not isinstance(found, Mapping):
        raise DeclarationError(f"{where} declares no property {field!r}")
    return found


def _side(output: bool) -> str:
    return "output" if output else "input"


def tool_field(tool: str, field: str, *, output: bool = False) -> Mapping[str, Any]:
    """The schema of ``field`` in a shipped tool's input (or output) schema."""
    contract = _TOOLS[tool]
    schema = contract.output_schema if output else contract.input_schema
    return field_of(schema, field, f"tool {tool} {_side(output)}")


def skill_field(agent: str, skill: str, field: str, *, output: bool = False) -> Mapping[str, Any]:
    """The schema of ``field`` in a shipped agent skill's input (or output) schema."""
    found = _AGENTS[agent].skill(skill)
    schema = found.output_schema if output else found.input_schema
    return field_of(schema, field, f"agent {agent} skill {skill} {_side(output)}")


def pattern_of(field: Mapping[str, Any]) -> str:
    pattern = field.get("pattern")
    if not isinstance(pattern, str):
        raise DeclarationError(f"no pattern declared in {dict(field)!r}")
    return pattern


def enum_of(field: Mapping[str, Any]) -> tuple[str, ...]:
    values = field.get("enum")
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise DeclarationError(f"no string enum declared in {dict(field)!r}")
    return tuple(values)


def declared_by(values: Sequence[str]) -> Callable[[type[E]], type[E]]:
    """Class decorator: the enum's values must be the spec's, in the spec's order."""

    def check(cls: type[E]) -> type[E]:
        mine = [m.value for m in cls]
        if mine != list(values):
            raise DeclarationError(f"{cls.__name__} has {mine}; its spec declares {list(values)}")
        return cls

    return check


def shaped_by(schema: Mapping[str, Any], where: str) -> Callable[[type[B]], type[B]]:
    """Class decorator: the model has exactly the object schema's properties, requires no field
    the schema leaves optional, and forbids extra fields when the schema does. Each nested
    object model is checked with its own decorator (the schema's subschema)."""

    def check(cls: type[B]) -> type[B]:
        props = schema.get("properties")
        declared = set(props) if isinstance(props, Mapping) else set()
        mine = {f.alias or name for name, f in cls.model_fields.items()}
        required = {f.alias or name for name, f in cls.model_fields.items() if f.is_required()}
        problems = []
        if mine != declared:
            problems.append(f"fields {sorted(mine ^ declared)} are not in both")
        if extra := required - set(schema.get("required", ())):
            problems.append(f"requires {sorted(extra)}, which the schema leaves optional")
        if (
            schema.get("additionalProperties") is False
            and cls.model_config.get("extra") != "forbid"
        ):
            problems.append("allows extra fields, which the schema forbids")
        if problems:
            raise DeclarationError(f"{cls.__name__} is not {where}: {'; '.join(problems)}")
        return cls

    return check


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
