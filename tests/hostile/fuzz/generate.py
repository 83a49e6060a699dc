"""Valid instances of the contracts' JSON Schemas: the seeds the mutations start from.

A small walker over the schema features our contracts use (types, properties, required,
enums, patterns, bounds, arrays, ``$ref`` to ``$defs``); a string with a pattern takes the
first of a few domain-shaped candidates that matches it, so generated orders, customers and
keys look like the real ones and reach the handlers instead of stopping at validation.
"""

from __future__ import annotations

import random
import re
from typing import Any, Final

CANDIDATES: Final = (
    "O-1001",
    "C-01",
    "refund:O-1001:fuzz",
    "wrong_size",
    "approve",
    "ok",
    "2026-01-01T00:00:00Z",
    "a",
)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        return dict(node)
    return schema


def _string(schema: dict[str, Any], rnd: random.Random) -> str:
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        for candidate in CANDIDATES:
            if re.search(pattern, candidate):
                return candidate
    if schema.get("format") == "date-time":
        return "2026-01-01T00:00:00Z"
    low = int(schema.get("minLength", 1))
    return "x" * max(low, rnd.randint(1, 12))


def example(schema: dict[str, Any], rnd: random.Random, root: dict[str, Any] | None = None) -> Any:
    """One instance that should satisfy ``schema`` (best effort for patterns)."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rnd.choice(list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return example(rnd.choice(list(schema[key])), rnd, root)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = rnd.choice([k for k in kind if k != "null"] or ["null"])
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        return {
            name: example(sub, rnd, root)
            for name, sub in props.items()
            if name in required or rnd.random() < 0.5
        }
    if kind == "array":
        items = schema.get("items", {})
        count = max(int(schema.get("minItems", 0)), rnd.randint(0, 2))
        return [example(items, rnd, root) for _ in range(count)]
    if kind == "string":
        return _string(schema, rnd)
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        high = int(schema.get("maximum", low + 100))
        return rnd.randint(low, min(high, low + 10_000))
    if kind == "number":
        return round(rnd.uniform(0, 100), 2)
    if kind == "boolean":
        return rnd.random() < 0.5
    return None
