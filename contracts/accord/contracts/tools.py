"""Tool contracts: what a tool takes, returns, may fail with, and what it does to the world.

One YAML file per tool. MCP annotations are derived from the contract, never written twice.
Who may call a tool is part of its contract too (``access``, accord.contracts.tool_access).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from accord.contracts.errors import ErrorCode
from accord.contracts.loading import ContractFileError, load_model
from accord.contracts.spec_folders import contract_files
from accord.contracts.tool_access import ToolAccess
from accord.contracts.validation import schema_path
from accord.contracts.versions import SEMVER, major

TOOL_NAME: Final = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"
IDEMPOTENCY_FIELD: Final = "idempotency_key"


class SideEffect(StrEnum):
    NONE = "none"
    REVERSIBLE_WRITE = "reversible_write"
    IRREVERSIBLE_WRITE = "irreversible_write"


class IdempotencyKey(StrEnum):
    REQUIRED = "required"
    OPTIONAL = "optional"
    NONE = "none"


DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect of every contract schema (MCP's default when `$schema` is absent)."""


def check_json_schema(schema: dict[str, Any]) -> None:
    """Raise ValueError when ``schema`` is not a valid JSON Schema (2020-12) object schema."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = schema_path(exc)
        raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
    if schema.get("type") != "object":
        raise ValueError("must be a JSON Schema of type 'object'")
    dialect = schema.get("$schema", DIALECT)
    if dialect.rstrip("#") != DIALECT:  # checked as 2020-12, so it must say no other dialect
        raise ValueError(f"$schema {dialect!r} is not supported: only {DIALECT}")
    for ref in _refs(schema):
        # MCP 2026-07-28: a network $ref is never fetched; a schema is complete in itself.
        if not ref.startswith("#"):
            raise ValueError(f"$ref {ref!r} is not in the schema: only local references (#/...)")


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def check_also_serves(value: list[str]) -> list[str]:
    """``also_serves``: semantic versions, one per major (ValueError otherwise)."""
    for version in value:
        if not re.match(SEMVER, version):
            raise ValueError(f"{version!r} is not a semantic version")
    if len({major(v) for v in value}) != len(value):
        raise ValueError("also_serves names each major version once")
    return value


class ToolContract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=TOOL_NAME, max_length=64)
    version: str = Field(pattern=SEMVER)
    title: str = Field(min_length=1, max_length=120)
    description: str = Field(min_length=1, max_length=2000)
    side_effect: SideEffect
    idempotency_key: IdempotencyKey
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    errors: list[ErrorCode] = Field(default_factory=list)
    # Optional (contract format 1.0 files without it still load): a tool without it is open to
    # any verified principal; every shipped tool declares one.
    access: ToolAccess | None = None
    # Other major versions this tool honours side by side during a migration (docs/
    # contract-evolution.md): a client built against any of them may call it.
    also_serves: list[str] = Field(default_factory=list, max_length=4)

    @field_validator("also_serves")
    @classmethod
    def _served(cls, value: list[str]) -> list[str]:
        return check_also_serves(value)

    @property
    def served_versions(self) -> list[str]:
        """Every contract version this tool serves, its own first."""
        return [self.version, *self.also_serves]

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_json_schema(value)
        return value

    @model_validator(mode="after")
    def _key_rules(self) -> ToolContract:
        props = self.input_schema.get("properties", {})
        key_prop = props.get(IDEMPOTENCY_FIELD) if isinstance(props, dict) else None
        required = self.input_schema.get("required", [])
        key_declared = (
            isinstance(key_prop, dict)
            and key_prop.get("type") == "string"
            and IDEMPOTENCY_FIELD in required
        )
        if self.idempotency_key is IdempotencyKey.REQUIRED and not key_declared:
            raise ValueError(
                "idempotency_key: required means input_schema must require an "
                f"{IDEMPOTENCY_FIELD!r} string property"
            )
        if self.side_effect is not SideEffect.NONE and self.idempotency_key is IdempotencyKey.NONE:
            raise ValueError("a write tool (side_effect != none) must declare an idempotency key")
        if len(set(self.errors)) != len(self.errors):
            raise ValueError("errors must not repeat a code")
        if major(self.version) in {major(v) for v in self.also_serves}:
            raise ValueError("also_serves names other major versions than version's")
        if self.access is not None:
            self._access_rules(self.access, props if isinstance(props, dict) else {}, required)
            if ErrorCode.PERMISSION_DENIED not in self.errors:
                raise ValueError("a tool with an access section declares PERMISSION_DENIED")
        return self

    @staticmethod
    def _access_rules(access: ToolAccess, props: dict[str, Any], required: list[Any]) -> None:
        for field_name in (access.customer_field, access.approver_field):
            if field_name is not None and field_name not in props:
                raise ValueError(f"access: {field_name!r} is not a property of the input schema")
        if access.customer_field is not None and access.customer_field not in required:
            raise ValueError(f"access: customer_field {access.customer_field!r} must be required")

    @property
    def is_write(self) -> bool:
        return self.side_effect is not SideEffect.NONE

    def mcp_annotations(self) -> dict[str, Any]:
        """MCP ToolAnnotations (wire names) derived from the contract."""
        return {
            "title": self.title,
            "readOnlyHint": self.side_effect is SideEffect.NONE,
            "destructiveHint": self.side_effect is SideEffect.IRREVERSIBLE_WRITE,
            "idempotentHint": (
                self.side_effect is SideEffect.NONE
                or self.idempotency_key is IdempotencyKey.REQUIRED
            ),
            "openWorldHint": False,
        }

    def input_validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.input_schema)

    def output_validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.output_schema)


def load_tool_contract(path: Path | str) -> ToolContract:
    return load_model(ToolContract, Path(path))


def shipped_tool_contracts() -> dict[str, ToolContract]:
    """The tool contracts of every registered spec folder, by tool name."""
    out: dict[str, ToolContract] = {}
    for path in contract_files("tools"):
        contract = load_tool_contract(path)
        if contract.name in out:
            raise ContractFileError(path, "name", f"tool {contract.name!r} is defined twice")
        out[contract.name] = contract
    return out


def tool_contract(name: str) -> ToolContract:
    return shipped_tool_contracts()[name]
