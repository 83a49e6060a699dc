"""JSON Schema (draft 2020-12, as pydantic and the contract files write it) -> TypeScript types.

Covers what the contract's schemas use: ``$ref`` to ``$defs``, ``enum``, ``const``, ``anyOf``/
``oneOf``, ``type`` (one or a list), objects with ``properties``/``required``/
``additionalProperties``, and arrays. Anything else becomes ``unknown``, never a wrong type.
Constraints (``maxLength``, ``pattern``...) have no TypeScript form: a validator checks them
against the schema the package also exports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_SCALARS = {
    "string": "string",
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
}


def _comment(text: str, indent: str) -> list[str]:
    lines = text.strip().replace("*/", "* /").splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in lines), f"{indent} */"]


def _union(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    if "unknown" in unique:
        return "unknown"
    return " | ".join(unique) if unique else "never"


def _paren(expr: str) -> str:
    return f"({expr})" if " | " in expr else expr


Names = Mapping[tuple[Any, ...], str]
"""The values of enums that already have a type, by those values: an inline ``enum`` of exactly
those values is written as the type's name."""


def type_expr(
    schema: Mapping[str, Any] | bool, indent: str = "", names: Names | None = None
) -> str:
    """The TypeScript type of a schema (``indent`` is where an inline object's lines start)."""
    if schema is True or schema == {}:
        return "unknown"
    if schema is False:
        return "never"
    assert isinstance(schema, Mapping)
    if "$ref" in schema:
        ref = schema["$ref"]
        return ref.rsplit("/", 1)[-1] if ref.startswith("#/$defs/") else "unknown"
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        if names and tuple(schema["enum"]) in names:
            return names[tuple(schema["enum"])]
        return _union([json.dumps(v, ensure_ascii=False) for v in schema["enum"]])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _union([type_expr(s, indent, names) for s in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([type_expr({**schema, "type": k}, indent, names) for k in kind])
    if kind == "object" or "properties" in schema:
        return _object(schema, indent, names)
    if kind == "array":
        return f"{_paren(type_expr(schema.get('items', True), indent, names))}[]"
    if isinstance(kind, str) and kind in _SCALARS:
        return _SCALARS[kind]
    return "unknown"


def _object(schema: Mapping[str, Any], indent: str, names: Names | None) -> str:
    props: Mapping[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    if not props:
        return (
            "Record<string, unknown>"
            if extra in (True, {})
            else (
                f"Record<string, {type_expr(extra, indent, names)}>" if extra is not False else "{}"
            )
        )
    body = _members(schema, indent + "  ", names)
    if extra is not False:
        body.append(f"{indent}  [key: string]: unknown;")
    return "{\n" + "\n".join(body) + f"\n{indent}}}"


def _members(schema: Mapping[str, Any], indent: str, names: Names | None) -> list[str]:
    required = set(schema.get("required", ()))
    lines: list[str] = []
    for name, sub in schema.get("properties", {}).items():
        if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
            lines.extend(_comment(sub["description"], indent))
        key = name if _IDENT.match(name) else json.dumps(name)
        mark = "" if name in required else "?"
        lines.append(f"{indent}{key}{mark}: {type_expr(sub, indent, names)};")
    return lines


def declaration(name: str, schema: Mapping[str, Any], names: Names | None = None) -> list[str]:
    """``export interface``/``export type`` lines declaring ``name`` as ``schema``."""
    about = schema.get("description")
    lines = _comment(about, "") if isinstance(about, str) else []
    if schema.get("properties") and schema.get("additionalProperties", True) is False:
        lines.append(f"export interface {name} {{")
        lines.extend(_members(schema, "  ", names))
        lines.append("}")
    else:
        lines.append(f"export type {name} = {type_expr(schema, '', names)};")
    return lines


def collect_defs(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Every ``$defs`` entry of the documents, by name; one name must mean one schema."""
    found: dict[str, Mapping[str, Any]] = {}
    for owner, doc in documents.items():
        for name, sub in doc.get("$defs", {}).items():
            if name in found and found[name] != sub:
                raise ValueError(f"$defs/{name} of {owner} differs from another schema's")
            found[name] = sub
    return found
