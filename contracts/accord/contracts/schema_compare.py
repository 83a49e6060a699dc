"""Is a served JSON Schema the contract's? The one comparison every checker uses.

``accord tools check`` (accord.protocol.mcp.contract_check), the MCP client at connect time and
the contract test kit (TOOL-005, TOOL-013, AGENT-002) all ask the same question, so they must
answer it the same way: a server on a bare SDK that adds ``title`` keys (pydantic does) or
rewords a ``description`` serves the contract; one that changes a constraint does not.

Documentation-only keywords (:data:`DOC_KEYWORDS`) are dropped and unordered lists
(``required``, ``type``) sorted before comparing; a property *named* like a keyword is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# Keywords that change no validation outcome (JSON Schema 2020-12 meta-data and core
# vocabulary notes). ``default`` and ``readOnly`` are not here: clients act on them.
DOC_KEYWORDS: Final = frozenset({"title", "description", "$comment", "examples", "$schema"})
_SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE: Final = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    }
)

Difference = tuple[str, Any, Any]  # (JSON-pointer-like path, expected, actual)


def normalize_schema(schema: Any) -> Any:
    """A schema with documentation-only keywords removed and unordered lists sorted."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DOC_KEYWORDS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {k: normalize_schema(v) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [normalize_schema(v) for v in value]
        elif key in _SCHEMA_ONE:
            out[key] = normalize_schema(value)
        elif key in ("required", "type") and isinstance(value, list):
            out[key] = sorted(value, key=str)
        else:
            out[key] = value
    return out


def first_difference(expected: Any, actual: Any, path: str = "") -> Difference | None:
    """The JSON-pointer-like path of the first place two JSON values differ, or None."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in sorted(set(expected) | set(actual), key=str):
            if key not in actual:
                return f"{path}/{key}", expected[key], "<absent>"
            if key not in expected:
                return f"{path}/{key}", "<absent>", actual[key]
            found = first_difference(expected[key], actual[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = first_difference(e, a, f"{path}/{i}")
            if found:
                return found
        return None
    if expected == actual and type(expected) is type(actual):
        return None
    return path or "/", expected, actual


def schema_difference(declared: Any, served: Any) -> Difference | None:
    """Where ``served`` departs from the ``declared`` schema in a constraint, or None."""
    return first_difference(normalize_schema(declared), normalize_schema(served))
