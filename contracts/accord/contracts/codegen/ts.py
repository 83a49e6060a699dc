"""The TypeScript renderer: a :class:`~.model.ContractModel` as ES modules (strict TypeScript).

Enums become a ``readonly`` tuple of their values, a union type and a type guard; records become
interfaces of ``readonly`` fields; tables keyed by an enum become exhaustive ``Record``s (the
compiler then checks every status or code has its row), other tables ``ReadonlyMap``s; schemas
become types (:mod:`.jsonschema_ts`) and, in the framework's package, ``as const`` documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from accord.contracts.codegen.jsonschema_ts import collect_defs, declaration
from accord.contracts.codegen.model import (
    ContractModel,
    Enum,
    EnumRef,
    ListOf,
    MapOf,
    Module,
    Record,
    RecordRef,
    Scalar,
    TypeExpr,
)

_SPLIT = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def upper_snake(name: str) -> str:
    return _SPLIT.sub("_", name).upper()


def _lit(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _type(t: TypeExpr) -> str:
    if isinstance(t, Scalar):
        return {"string": "string", "bool": "boolean"}.get(t.kind, "number")
    if isinstance(t, EnumRef | RecordRef):
        return t.name
    if isinstance(t, ListOf):
        return f"readonly {_type(t.item)}[]"
    if isinstance(t.key, EnumRef):
        return f"Readonly<Record<{_type(t.key)}, {_type(t.value)}>>"
    return f"ReadonlyMap<{_type(t.key)}, {_type(t.value)}>"


def _refs(t: TypeExpr) -> set[str]:
    if isinstance(t, EnumRef | RecordRef):
        return {t.name}
    if isinstance(t, ListOf):
        return _refs(t.item)
    if isinstance(t, MapOf):
        return _refs(t.key) | _refs(t.value)
    return set()


class _Values:
    """Values of a module's constants, rendered by their declared type."""

    def __init__(self, records: Mapping[str, Record]) -> None:
        self.records = records

    def render(self, value: Any, t: TypeExpr, indent: str) -> str:
        inner = indent + "  "
        if isinstance(t, Scalar | EnumRef):
            return _lit(value)
        if isinstance(t, ListOf):
            items = [self.render(v, t.item, inner) for v in value]
            flat = "[" + ", ".join(items) + "]"
            if len(flat) + len(indent) <= 80 and "\n" not in flat:
                return flat
            return "[\n" + "".join(f"{inner}{i},\n" for i in items) + f"{indent}]"
        if isinstance(t, RecordRef):
            record = self.records[t.name]
            unknown = set(value) - {f.name for f in record.fields}
            if unknown:  # a new column of the export must reach the model, never vanish
                raise ValueError(f"{t.name} has no field for {sorted(unknown)}")
            fields = [f for f in record.fields if f.name in value]
            body = "".join(
                f"{inner}{f.name}: {self.render(value[f.name], f.type, inner)},\n" for f in fields
            )
            return "{\n" + body + f"{indent}}}"
        if isinstance(t.key, EnumRef):
            body = "".join(
                f"{inner}{_lit(k)}: {self.render(v, t.value, inner)},\n" for k, v in value.items()
            )
            return "{\n" + body + f"{indent}}}"
        pairs = "".join(
            f"{inner}[{_lit(k)}, {self.render(v, t.value, inner)}],\n" for k, v in value.items()
        )
        return f"new Map<{_type(t.key)}, {_type(t.value)}>([\n{pairs}{indent}])"


def _doc(text: str) -> list[str]:
    return [f"/** {text} */"] if text else []


def _enum(enum: Enum) -> list[str]:
    values = upper_snake(enum.name) + "_VALUES"
    return [
        *_doc(enum.doc),
        f"export const {values} = [",
        *(f"  {_lit(v)}," for v in enum.values),
        "] as const;",
        f"export type {enum.name} = (typeof {values})[number];",
        f"export function is{enum.name}(value: unknown): value is {enum.name} {{",
        f"  return ({values} as readonly unknown[]).includes(value);",
        "}",
    ]


def _record(record: Record) -> list[str]:
    return [
        *_doc(record.doc),
        f"export interface {record.name} {{",
        *(
            f"  readonly {f.name}{'?' if f.optional else ''}: {_type(f.type)};"
            for f in record.fields
        ),
        "}",
    ]


def _schemas(module: Module, enums: Mapping[str, Enum]) -> tuple[list[str], set[str]]:
    """Type declarations of the module's schemas (their ``$defs`` once), and enums they use."""
    documents = {s.type_name: s.document for s in module.schemas}
    names = {e.values: e.name for e in enums.values()}
    lines: list[str] = []
    for name, sub in sorted(collect_defs(documents).items()):
        if name in enums:
            if tuple(sub.get("enum", ())) != enums[name].values:
                raise ValueError(f"$defs/{name} is not the contract's enum {name}")
            continue
        lines += ["", *declaration(name, sub, names)]
    for schema in module.schemas:
        top = {k: v for k, v in schema.document.items() if k != "$defs"}
        lines += ["", *declaration(schema.type_name, top, names)]
        if schema.const is not None:
            doc = json.dumps(schema.document, indent=2, ensure_ascii=False)
            lines += [f"export const {schema.const} = {doc} as const;"]
    text = "\n".join(line for line in lines if not line.startswith("export const "))
    used = {name for name in enums if re.search(rf"\b{name}\b", text)}
    return lines, used


def _module(module: Module, model: ContractModel, owner: Mapping[str, str], command: str) -> str:
    enums = {e.name: e for m in model.modules for e in m.enums}
    records = {r.name: r for m in model.modules for r in m.records}
    body: list[str] = []
    refs: set[str] = set()
    for enum in module.enums:
        body += ["", *_enum(enum)]
    for record in module.records:
        body += ["", *_record(record)]
        for f in record.fields:
            refs |= _refs(f.type)
    values = _Values(records)
    for const in module.constants:
        refs |= _refs(const.type)
        value = values.render(const.value, const.type, "")
        # A scalar keeps its literal type (a header name is that string, not any string).
        annotation = "" if isinstance(const.type, Scalar) else f": {_type(const.type)}"
        body += ["", *_doc(const.doc), f"export const {const.name}{annotation} = {value};"]
    schema_lines, used = _schemas(module, enums)
    body += schema_lines
    refs |= used
    imports: dict[str, set[str]] = {}
    for name in refs:
        if owner[name] != module.name:
            imports.setdefault(owner[name], set()).add(name)
    head = [
        f"// Generated by `python -m accord.contracts.codegen {command}` from the Accord contract",
        f"// {model.version} (`accord contracts export`). Do not edit: `make contracts-ts`.",
        "",
        f"// {module.doc}",
        *(
            f'import type {{ {", ".join(sorted(names))} }} from "./{mod}.js";'
            for mod, names in sorted(imports.items())
        ),
    ]
    return "\n".join(head + body) + "\n"


def render(model: ContractModel, command: str = "ts") -> dict[str, str]:
    """File name (relative to the generated directory) -> its text."""
    owner = {
        name: m.name
        for m in model.modules
        for name in [*(e.name for e in m.enums), *(r.name for r in m.records)]
    }
    files = {f"{m.name}.ts": _module(m, model, owner, command) for m in model.modules}
    files["index.ts"] = (
        f"// Generated by `python -m accord.contracts.codegen {command}`. Do not edit.\n\n"
        + "".join(f'export * from "./{m.name}.js";\n' for m in model.modules)
    )
    return files
