"""Where a JSON Schema error is, spelled one way for every boundary (contracts.validation)."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from accord.contracts.validation import ROOT, schema_path

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["items"],
    "properties": {
        "items": {"type": "array", "items": {"type": "object", "required": ["sku"]}},
    },
}


def _error(value: Any) -> Any:
    return next(Draft202012Validator(SCHEMA).iter_errors(value))


def test_a_nested_error_is_its_path() -> None:
    error = _error({"items": [{}]})
    assert schema_path(error) == "items/0"
    assert schema_path(error, pointer=True) == "/items/0"


def test_an_error_of_the_value_itself_is_the_root() -> None:
    error = _error({})
    assert schema_path(error) == ROOT == "(root)"
    assert schema_path(error, pointer=True) == "/"


def test_a_schema_error_is_where_in_the_schema() -> None:
    with pytest.raises(SchemaError) as info:
        Draft202012Validator.check_schema({"properties": {"a": {"type": 5}}})
    assert schema_path(info.value) == "properties/a/type"
