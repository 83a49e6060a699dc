"""Id formats and enums are read from the shipped specs, and every spec agrees with the others."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Any

import pytest

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.declared import (
    DeclarationError,
    declared_by,
    enum_of,
    pattern_of,
    skill_field,
    tool_field,
)
from accord.contracts.tools import shipped_tool_contracts
from accord.refund_contracts import domain
from accord.refund_contracts.domain import (
    ApprovalDecision,
    OrderStatus,
    PolicyRule,
    RefundDecision,
    RefundReason,
    RiskLevel,
)


def _schemas() -> Iterator[tuple[str, Mapping[str, Any]]]:
    for name, tool in shipped_tool_contracts().items():
        yield f"tool {name} input", tool.input_schema
        yield f"tool {name} output", tool.output_schema
    for name, agent in shipped_agent_contracts().items():
        for skill in agent.skills:
            yield f"agent {name} {skill.id} input", skill.input_schema
            yield f"agent {name} {skill.id} output", skill.output_schema


def _properties(schema: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (name, schema) of a property, at any depth."""
    if isinstance(schema, Mapping):
        props = schema.get("properties")
        if isinstance(props, Mapping):
            for name, sub in props.items():
                if isinstance(sub, Mapping):
                    yield name, sub
        for value in schema.values():
            yield from _properties(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _properties(item)


def test_every_spec_spells_a_field_s_pattern_the_same() -> None:
    patterns: dict[str, dict[str, set[str]]] = {}
    for where, schema in _schemas():
        for name, sub in _properties(schema):
            if isinstance(sub.get("pattern"), str):
                patterns.setdefault(name, {}).setdefault(sub["pattern"], set()).add(where)
    disagree = {name: found for name, found in patterns.items() if len(found) > 1}
    assert not disagree
    assert patterns["order_id"].keys() == {domain.ORDER_ID_PATTERN}
    assert patterns["customer_id"].keys() == {domain.CUSTOMER_ID_PATTERN}


@pytest.mark.parametrize(
    ("cls", "declared"),
    [
        (RefundReason, skill_field("policy-check", "refund.policy", "reason")),
        (PolicyRule, skill_field("policy-check", "refund.policy", "rule", output=True)),
        (RiskLevel, skill_field("risk-check", "refund.risk", "risk", output=True)),
        (OrderStatus, tool_field("orders.lookup", "status", output=True)),
        (RefundDecision, skill_field("orchestrator", "refund.request", "decision", output=True)),
        (ApprovalDecision, skill_field("orchestrator", "refund.approve", "decision")),
        (ApprovalDecision, skill_field("orchestrator", "refund.approve", "decision", output=True)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_each_enum_is_its_spec_s(cls: type[StrEnum], declared: Mapping[str, Any]) -> None:
    assert [m.value for m in cls] == list(enum_of(declared))


def test_an_enum_that_drifts_from_its_spec_is_refused() -> None:
    with pytest.raises(DeclarationError, match="its spec declares"):

        @declared_by(("a", "b"))
        class Drifted(StrEnum):
            A = "a"

    with pytest.raises(DeclarationError, match="declares no property"):
        tool_field("orders.lookup", "no_such_field")
    with pytest.raises(DeclarationError, match="no pattern"):
        pattern_of(tool_field("orders.lookup", "status", output=True))
    with pytest.raises(DeclarationError, match="no string enum"):
        enum_of(tool_field("orders.lookup", "order_id"))


def test_ids_match_the_whole_value() -> None:
    assert domain.is_order_id("O-1001")
    assert not domain.is_order_id("O-12")
    assert not domain.is_order_id("O-1001\n")  # Python's `$` alone would let this through
    assert domain.is_customer_id("C-01")
    assert not domain.is_customer_id("C-01\n")
    assert not domain.is_customer_id("alice")
