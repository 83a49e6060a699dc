"""A contract's JSON Schema compiled twice: jsonschema-rs decides, jsonschema explains.

Every tool call and agent turn is checked against a schema (tool arguments and results on both
sides of MCP, skill inputs and outputs). jsonschema-rs checks a value about a hundred times
faster than the pure-Python validator, which cost as much as a database lookup per call; the
``jsonschema`` validator is still the one that names the field and the rule, so it runs only
when a value has failed. A schema whose `$ref` names a network URI is refused (ValueError).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError


class CompiledSchema:
    __slots__ = ("_explaining", "_fast")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        # offline: a `$ref` to a network URI is refused, never fetched (MCP 2026-07-28, "$ref
        # Resolution"; jsonschema-rs fetches by default). `jsonschema` fetches nothing either.
        self._fast = jsonschema_rs.Draft202012Validator(dict(schema), offline=True)
        self._explaining = Draft202012Validator(dict(schema))

    def is_valid(self, value: Any) -> bool:
        """The gate: whether ``value`` keeps the schema."""
        return bool(self._fast.is_valid(value))

    def iter_errors(self, value: Any) -> Iterator[ValidationError]:
        """Why ``value`` breaks the schema, field by field (after :meth:`is_valid` said no)."""
        return iter(self._explaining.iter_errors(value))
