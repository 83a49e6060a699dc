from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from accord.contracts import (
    ContractFileError,
    ErrorCode,
    load_agent_contract,
    load_tool_contract,
    tool_contract,
)
from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.tools import shipped_tool_contracts

GOOD_TOOL = {
    "name": "stock.reserve",
    "version": "1.2.0",
    "title": "Reserve stock",
    "description": "Reserve items",
    "side_effect": "reversible_write",
    "idempotency_key": "required",
    "errors": ["OUT_OF_STOCK", "INVALID_INPUT"],
    "input_schema": {
        "type": "object",
        "required": ["idempotency_key", "sku"],
        "properties": {"idempotency_key": {"type": "string"}, "sku": {"type": "string"}},
    },
    "output_schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
}


def write(tmp_path: Path, data: object, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_shipped_contracts_validate() -> None:
    tools = shipped_tool_contracts()
    assert set(tools) == {
        "orders.lookup",
        "customers.history",
        "orders.customer_history",
        "refunds.issue",
        "refunds.get",
        "refunds.list",
    }
    agents = shipped_agent_contracts()
    assert set(agents) == {"orchestrator", "policy-check", "risk-check"}
    assert agents["policy-check"].waiting_reasons == ["input"]


def test_annotations_are_derived_from_side_effects() -> None:
    issue = tool_contract("refunds.issue").mcp_annotations()
    assert issue["readOnlyHint"] is False
    assert issue["destructiveHint"] is True
    assert issue["idempotentHint"] is True
    lookup = tool_contract("orders.lookup").mcp_annotations()
    assert lookup["readOnlyHint"] is True
    assert lookup["destructiveHint"] is False


def test_a_good_third_party_contract_loads(tmp_path: Path) -> None:
    contract = load_tool_contract(write(tmp_path, GOOD_TOOL))
    assert contract.is_write
    assert contract.mcp_annotations()["destructiveHint"] is False


def test_a_file_is_parsed_once_until_it_changes(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_TOOL)
    first = load_tool_contract(path)
    assert load_tool_contract(path) is first  # the same file: the model already read
    changed = write(tmp_path, {**GOOD_TOOL, "version": "1.3.0"})
    os.utime(changed, ns=(1, 1))  # another modification time, even within the clock's tick
    assert load_tool_contract(changed).version == "1.3.0"
    write(tmp_path, {**GOOD_TOOL, "name": "Bad Name"})
    with pytest.raises(ContractFileError):  # a broken edit is an error, not the old model
        load_tool_contract(path)


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"version": "1.0"}, "version", "pattern"),
        ({"name": "Bad Name"}, "name", "pattern"),
        ({"side_effect": "maybe"}, "side_effect", "Input should be"),
        ({"errors": ["NOT_A_CODE"]}, "errors.0", "Input should be"),
        ({"errors": ["OUT_OF_STOCK", "OUT_OF_STOCK"]}, "<document>", "repeat"),
        (
            {"input_schema": {"type": "object", "properties": {"x": {"type": "strnig"}}}},
            "input_schema",
            "not a valid JSON Schema",
        ),
        ({"output_schema": {"type": "array"}}, "output_schema", "type 'object'"),
        (
            {"output_schema": {"type": "object", "properties": {"x": {"$ref": "http://h/s"}}}},
            "output_schema",
            "only local references",
        ),
        (
            {
                "input_schema": {
                    "type": "object",
                    "$schema": "http://json-schema.org/draft-07/schema#",
                }
            },
            "input_schema",
            "only https://json-schema.org/draft/2020-12/schema",
        ),
        (
            {"input_schema": {"type": "object", "properties": {"sku": {"type": "string"}}}},
            "<document>",
            "idempotency_key: required",
        ),
        ({"idempotency_key": "none"}, "<document>", "must declare an idempotency key"),
        ({"extra_field": 1}, "extra_field", "Extra inputs"),
    ],
)
def test_malformed_contract_names_file_field_and_rule(
    tmp_path: Path, change: dict[str, object], field: str, rule: str
) -> None:
    path = write(tmp_path, {**GOOD_TOOL, **change})
    with pytest.raises(ContractFileError) as info:
        load_tool_contract(path)
    err = info.value
    assert err.code is ErrorCode.INVALID_INPUT
    assert err.path == str(path)
    assert str(path) in err.message
    assert err.field == field
    assert rule in err.rule


@pytest.mark.parametrize(
    ("text", "field"),
    [("name: [unclosed", "line 1"), ("- a\n- b\n", "<document>"), ("", "<document>")],
)
def test_unparseable_files(tmp_path: Path, text: str, field: str) -> None:
    with pytest.raises(ContractFileError) as info:
        load_tool_contract(write(tmp_path, text))
    assert info.value.field == field


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ContractFileError) as info:
        load_agent_contract(tmp_path / "nope.yaml")
    assert "cannot be read" in info.value.rule


def test_agent_contract_rules(tmp_path: Path) -> None:
    agent = shipped_agent_contracts()["policy-check"].model_dump(mode="json")
    agent["skills"] = agent["skills"] * 2
    with pytest.raises(ContractFileError) as info:
        load_agent_contract(write(tmp_path, agent))
    assert "unique" in info.value.rule
    agent["skills"] = []
    with pytest.raises(ContractFileError):
        load_agent_contract(write(tmp_path, agent))
    agent = shipped_agent_contracts()["policy-check"].model_dump(mode="json")
    agent["waiting_reasons"] = ["sleep"]
    with pytest.raises(ContractFileError) as info:
        load_agent_contract(write(tmp_path, agent))
    assert info.value.field == "waiting_reasons.0"
