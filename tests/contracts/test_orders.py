"""orders.lookup's one Python type agrees with its contract, and the check that says so bites."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from accord.contracts.declared import DeclarationError, shaped_by
from accord.contracts.tools import shipped_tool_contracts
from accord.refund_contracts.orders import OrderFacts

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["a"],
    "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
}


def test_the_type_reads_what_the_contract_describes() -> None:
    output = shipped_tool_contracts()["orders.lookup"].output_schema
    assert set(OrderFacts.model_fields) == set(output["properties"])


def test_a_field_the_schema_does_not_declare_fails() -> None:
    class Extra(BaseModel):
        model_config = ConfigDict(extra="forbid")
        a: str
        b: int | None = None
        c: str = ""

    with pytest.raises(DeclarationError, match=r"\['c'\]"):
        shaped_by(SCHEMA, "the schema")(Extra)


def test_requiring_an_optional_field_or_allowing_extras_fails() -> None:
    class Strict(BaseModel):
        a: str
        b: int

    with pytest.raises(DeclarationError, match=r"requires \['b'\].*allows extra fields"):
        shaped_by(SCHEMA, "the schema")(Strict)


def test_a_model_of_the_schema_passes() -> None:
    class Same(BaseModel):
        model_config = ConfigDict(extra="forbid")
        a: str
        b: int | None = None

    assert shaped_by(SCHEMA, "the schema")(Same) is Same
