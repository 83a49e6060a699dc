"""The contract comparison itself, on tools/list entries built in the test."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from accord.contracts.errors import ErrorCode
from accord.contracts.schema_compare import normalize_schema
from accord.contracts.tools import tool_contract
from accord.protocol.mcp.contract_check import (
    FindingKind,
    check_tools,
    default_contracts,
    violation,
)

ISSUE = tool_contract("refunds.issue")


def _listed(**overrides: Any) -> types.Tool:
    wire: dict[str, Any] = {
        "name": ISSUE.name,
        "inputSchema": ISSUE.input_schema,
        "outputSchema": ISSUE.output_schema,
        "annotations": ISSUE.mcp_annotations(),
    }
    wire.update(overrides)
    return types.Tool.model_validate(wire)


def test_exact_tool_has_no_findings() -> None:
    assert check_tools("s", [_listed()], [ISSUE]) == []


def test_wording_may_differ_but_constraints_may_not() -> None:
    reworded = {
        **ISSUE.input_schema,
        "description": "other words",
        "$schema": "x",
        "required": list(reversed(ISSUE.input_schema["required"])),
    }
    assert check_tools("s", [_listed(inputSchema=reworded)], [ISSUE]) == []
    looser = {**ISSUE.input_schema, "required": ["order_id"]}
    [finding] = check_tools("s", [_listed(inputSchema=looser)], [ISSUE])
    assert finding.kind is FindingKind.INPUT_SCHEMA
    assert finding.where == "/required"


def test_a_property_named_like_a_keyword_is_kept() -> None:
    schema = {"type": "object", "properties": {"description": {"type": "string"}}}
    assert normalize_schema(schema) == schema


def test_output_schema_difference_names_the_path() -> None:
    out = {
        **ISSUE.output_schema,
        "properties": {**ISSUE.output_schema["properties"], "replayed": {"type": "string"}},
    }
    [finding] = check_tools("s", [_listed(outputSchema=out)], [ISSUE])
    assert finding.kind is FindingKind.OUTPUT_SCHEMA
    assert finding.where == "/properties/replayed/type"
    assert (finding.expected, finding.actual) == ("boolean", "string")


def test_missing_hints_take_the_spec_defaults() -> None:
    # No annotations at all: readOnly false, destructive true, idempotent false.
    findings = check_tools("s", [_listed(annotations=None)], [ISSUE])
    assert [(f.where, f.actual) for f in findings] == [
        ("idempotentHint", False),
        ("openWorldHint", True),
    ]


def test_missing_tool_and_violation_report() -> None:
    findings = check_tools("pay", [], [ISSUE])
    assert [f.kind for f in findings] == [FindingKind.MISSING_TOOL]
    err = violation("pay", findings)
    assert err.code is ErrorCode.CONTRACT_VIOLATION
    assert err.details["findings"][0]["tool"] == "refunds.issue"
    assert "refunds.issue" in err.message


def test_default_contracts_are_the_shipped_ones_listed() -> None:
    other = types.Tool(name="weather.now", input_schema={"type": "object"})
    assert [c.name for c in default_contracts([other, _listed()])] == ["refunds.issue"]
