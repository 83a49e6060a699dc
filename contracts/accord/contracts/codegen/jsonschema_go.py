"""JSON Schema (draft 2020-12, as pydantic and the contract files write it) -> Go types.

The Go counterpart of :mod:`.jsonschema_ts`, for what the contract's schemas use: ``$ref`` to
``$defs``, ``enum``, ``const``, ``anyOf``/``oneOf`` with ``null`` (a pointer), ``type`` (one, or
one and ``null``), objects with ``properties``/``required``/``additionalProperties``, arrays.
An object with properties becomes a struct (an inline one is named after its owner and field);
an optional or nullable field is a pointer (``omitempty`` when optional), so "absent" is never
read as a zero. Anything else becomes ``any``, never a wrong type. Constraints (``maxLength``,
``pattern``...) have no Go form: a validator checks them against the schema the package exports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from accord.contracts.codegen.jsonschema_ts import Names

_SCALARS = {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool"}
# Go spells these initialisms in capitals (TaskID, not TaskId).
INITIALISMS = frozenset(
    {"id", "url", "uri", "http", "json", "jsonrpc", "mcp", "a2a", "api", "jwks", "ttl", "sql"}
)
_WORD = re.compile(r"[A-Za-z][a-z0-9]*|[0-9]+")


def go_name(text: str) -> str:
    """An exported Go identifier for a wire name: ``task_id`` -> ``TaskID``,
    ``STATUS_META_KEY`` -> ``StatusMetaKey``, ``dev.accord/status`` -> ``DevAccordStatus``."""
    words: list[str] = []
    for chunk in re.split(r"[^A-Za-z0-9]+", text):
        if not chunk:
            continue
        if chunk.isupper() or chunk.islower() or chunk.isdigit():
            words.append(chunk.lower())
        else:  # camelCase or PascalCase: split where the case turns
            words.extend(w.lower() for w in _WORD.findall(chunk))
    name = "".join(w.upper() if w in INITIALISMS else w[:1].upper() + w[1:] for w in words)
    return name if name[:1].isalpha() else "X" + name


def _comment(text: str, indent: str) -> list[str]:
    return [f"{indent}// {line}".rstrip() for line in text.strip().splitlines()]


class GoTypes:
    """Collects the declarations the schemas need: named ``$defs`` and inline structs."""

    def __init__(self, names: Names | None = None) -> None:
        self.names = names or {}
        self.declared: dict[str, list[str]] = {}

    def _nullable(self, schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The one non-null alternative of ``X or null``, else None."""
        for key in ("anyOf", "oneOf"):
            if key in schema:
                rest = [s for s in schema[key] if s != {"type": "null"}]
                if len(rest) == 1 and len(rest) < len(schema[key]) and isinstance(rest[0], Mapping):
                    return rest[0]
        kind = schema.get("type")
        if isinstance(kind, list) and "null" in kind and len(kind) == 2:
            return {**schema, "type": next(k for k in kind if k != "null")}
        return None

    def type_expr(self, schema: Mapping[str, Any] | bool, owner: str) -> str:
        """The Go type of a schema; ``owner`` names an inline struct it declares."""
        if schema is True or schema is False or schema == {}:
            return "any"
        assert isinstance(schema, Mapping)
        if "$ref" in schema:
            ref = schema["$ref"]
            return ref.rsplit("/", 1)[-1] if ref.startswith("#/$defs/") else "any"
        inner = self._nullable(schema)
        if inner is not None:
            return "*" + self.type_expr(inner, owner).removeprefix("*")
        if "const" in schema:
            return self._of_values([schema["const"]])
        if "enum" in schema:
            if tuple(schema["enum"]) in self.names:
                return self.names[tuple(schema["enum"])]
            return self._of_values(schema["enum"])
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            return self._object(schema, owner)
        if kind == "array":
            return "[]" + self.type_expr(schema.get("items", True), owner + "Item")
        if isinstance(kind, str) and kind in _SCALARS:
            return _SCALARS[kind]
        return "any"

    @staticmethod
    def _of_values(values: list[Any]) -> str:
        kinds = {type(v) for v in values}
        if kinds == {str}:
            return "string"
        if kinds == {bool}:
            return "bool"
        if kinds == {int}:
            return "int64"
        return "any"

    def _object(self, schema: Mapping[str, Any], owner: str) -> str:
        props: Mapping[str, Any] = schema.get("properties", {})
        if not props:
            extra = schema.get("additionalProperties", True)
            if extra in (True, {}) or extra is False:
                return "map[string]any"
            return f"map[string]{self.type_expr(extra, owner + 'Value')}"
        if owner not in self.declared:
            self.declared[owner] = []  # reserve the name before the fields (recursion)
            self.declared[owner] = self.struct(owner, schema)
        return owner

    def struct(self, name: str, schema: Mapping[str, Any]) -> list[str]:
        about = schema.get("description")
        lines = _comment(about, "") if isinstance(about, str) else []
        lines.append(f"type {name} struct {{")
        required = set(schema.get("required", ()))
        for prop, sub in schema.get("properties", {}).items():
            if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
                lines.extend(_comment(sub["description"], "\t"))
            field = go_name(prop)
            t = self.type_expr(sub, name + field)
            tag = prop
            if prop not in required:
                tag += ",omitempty"
                if not t.startswith(("*", "[]", "map[")) and t != "any":
                    t = "*" + t
            lines.append(f"\t{field} {t} `json:{json.dumps(tag)}`")
        lines.append("}")
        return lines

    def declare(self, name: str, schema: Mapping[str, Any]) -> None:
        """Declare ``name`` as ``schema`` (a struct, a string enum or an alias-free type)."""
        if schema.get("properties"):
            self.declared[name] = []  # reserve the name before the fields (recursion)
            self.declared[name] = self.struct(name, schema)
            return
        about = schema.get("description")
        lines = _comment(about, "") if isinstance(about, str) else []
        values = schema.get("enum")
        if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
            lines.append(f"type {name} string")
            lines.append("")
            lines.append("const (")
            lines += [f"\t{name}{go_name(v)} {name} = {json.dumps(v)}" for v in values]
            lines.append(")")
        else:
            lines.append(f"type {name} {self.type_expr(schema, name + 'Value')}")
        self.declared[name] = lines

    def lines(self) -> list[str]:
        out: list[str] = []
        for name in sorted(self.declared):
            out += ["", *self.declared[name]]
        return out
