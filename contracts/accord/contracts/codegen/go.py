"""The Go renderer: a :class:`~.model.ContractModel` as one Go package.

Enums become a named ``string`` type, a constant per value (``StatusQueued``), the list of values
and a ``Valid`` method; records become structs (an optional field is its zero value when the row
does not set it, as the TypeScript ``?`` is absent); tables become typed slices and maps whose
keys and values are the enums' constants, so a value the model does not know cannot compile;
scalar constants become ``const``s; schemas become types (:mod:`.jsonschema_go`) and, in the
framework's package, the schema documents as JSON text. Names follow Go (``STATUS_META_KEY`` is
``StatusMetaKey``). :func:`render` writes plain Go; :func:`gofmt` is the layout, Go's own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from accord.contracts.codegen.jsonschema_go import GoTypes, go_name
from accord.contracts.codegen.jsonschema_ts import collect_defs
from accord.contracts.codegen.model import (
    ContractModel,
    Enum,
    EnumRef,
    ListOf,
    Module,
    Record,
    RecordRef,
    Scalar,
    TypeExpr,
)

_SCALARS = {"string": "string", "int": "int", "bool": "bool"}


def _common_prefix(values: tuple[str, ...]) -> str:
    """The words every value starts with (``TASK_STATE_``), which a constant's name drops."""
    if len(values) < 2:
        return ""
    words = [v.split("_") for v in values]
    shared: list[str] = []
    for column in zip(*words, strict=False):
        if len(set(column)) != 1 or any(len(w) == len(shared) + 1 for w in words):
            break  # a value must keep a word of its own
        shared.append(column[0])
    return "".join(w + "_" for w in shared)


class _Names:
    """Go names of the model's enums' values."""

    def __init__(self, enums: Mapping[str, Enum]) -> None:
        self.enums = enums

    def value(self, enum: str, value: str) -> str:
        values = self.enums[enum].values
        if value not in values:
            raise ValueError(f"{value!r} is no value of {enum}")
        return enum + go_name(value.removeprefix(_common_prefix(values)))


def _type(t: TypeExpr) -> str:
    if isinstance(t, Scalar):
        return _SCALARS[t.kind]
    if isinstance(t, EnumRef | RecordRef):
        return t.name
    if isinstance(t, ListOf):
        return f"[]{_type(t.item)}"
    return f"map[{_type(t.key)}]{_type(t.value)}"


def _lit(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    # JSON's string escapes are Go's (\", \\, \n, \uXXXX); Python writes no "\/".
    return json.dumps(value, ensure_ascii=False)


class _GoValues:
    """Values of a module's constants, rendered by their declared type."""

    def __init__(self, records: Mapping[str, Record], names: _Names) -> None:
        self.records = records
        self.names = names

    def render(self, value: Any, t: TypeExpr, indent: str) -> str:
        inner = indent + "\t"
        if isinstance(t, Scalar):
            return _lit(value)
        if isinstance(t, EnumRef):
            return self.names.value(t.name, value)
        if isinstance(t, ListOf):
            items = [self.render(v, t.item, inner) for v in value]
            if all("\n" not in i for i in items) and len(", ".join(items)) <= 80:
                return f"{_type(t)}{{" + ", ".join(items) + "}"
            return f"{_type(t)}{{\n" + "".join(f"{inner}{i},\n" for i in items) + f"{indent}}}"
        if isinstance(t, RecordRef):
            record = self.records[t.name]
            unknown = set(value) - {f.name for f in record.fields}
            if unknown:  # a new column of the export must reach the model, never vanish
                raise ValueError(f"{t.name} has no field for {sorted(unknown)}")
            body = "".join(
                f"{inner}{go_name(f.name)}: {self.render(value[f.name], f.type, inner)},\n"
                for f in record.fields
                if f.name in value and value[f.name] is not None
            )
            return f"{t.name}{{\n{body}{indent}}}"
        body = "".join(
            f"{inner}{self.render(k, t.key, inner)}: {self.render(v, t.value, inner)},\n"
            for k, v in value.items()
        )
        return f"{_type(t)}{{\n{body}{indent}}}"


def _doc(text: str, name: str) -> list[str]:
    if not text:
        return []
    # "A task's status" -> "Status is a task's status"; an initialism ("A2A ...") keeps its case.
    lead = text[:1].lower() if text[1:2].islower() or text[1:2] in ("", " ", "'") else text[:1]
    return [f"// {name} is {lead}{text[1:]}"]


def _enum(enum: Enum, names: _Names) -> list[str]:
    values = [names.value(enum.name, v) for v in enum.values]
    return [
        *_doc(enum.doc, enum.name),
        f"type {enum.name} string",
        "",
        "const (",
        *(f"\t{n} {enum.name} = {_lit(v)}" for n, v in zip(values, enum.values, strict=True)),
        ")",
        "",
        f"// {enum.name}Values lists every {enum.name}, in the contract's order.",
        f"var {enum.name}Values = []{enum.name}{{" + ", ".join(values) + "}",
        "",
        f"// Valid reports whether v is one of the contract's {enum.name} values.",
        f"func (v {enum.name}) Valid() bool {{",
        f"\tfor _, known := range {enum.name}Values {{",
        "\t\tif v == known {",
        "\t\t\treturn true",
        "\t\t}",
        "\t}",
        "\treturn false",
        "}",
    ]


def _record(record: Record) -> list[str]:
    lines = [*_doc(record.doc, record.name), f"type {record.name} struct {{"]
    for f in record.fields:
        tag = f.name + (",omitempty" if f.optional else "")
        lines.append(f"\t{go_name(f.name)} {_type(f.type)} `json:{json.dumps(tag)}`")
    return [*lines, "}"]


def _raw(text: str) -> str:
    """A Go string literal of ``text``: raw (readable) unless it holds a backquote."""
    return f"`{text}`" if "`" not in text and "\r" not in text else json.dumps(text)


def _schemas(module: Module, enums: Mapping[str, Enum]) -> list[str]:
    """Type declarations of the module's schemas (their ``$defs`` once), and the documents."""
    documents = {s.type_name: s.document for s in module.schemas}
    types = GoTypes({e.values: e.name for e in enums.values()})
    for name, sub in sorted(collect_defs(documents).items()):
        if name in enums:
            if tuple(sub.get("enum", ())) != enums[name].values:
                raise ValueError(f"$defs/{name} is not the contract's enum {name}")
            continue
        types.declare(name, sub)
    lines: list[str] = []
    for schema in module.schemas:
        top = {k: v for k, v in schema.document.items() if k != "$defs"}
        types.declare(schema.type_name, top)
        if schema.const is not None:
            const = go_name(schema.const)
            doc = json.dumps(schema.document, indent=2, ensure_ascii=False)
            lines += [
                "",
                f"// {const} is the JSON Schema of {schema.type_name} (draft 2020-12).",
                f"const {const} = {_raw(doc)}",
            ]
    return types.lines() + lines


def _module(module: Module, model: ContractModel, package: str, command: str) -> str:
    enums = {e.name: e for m in model.modules for e in m.enums}
    records = {r.name: r for m in model.modules for r in m.records}
    names = _Names(enums)
    body: list[str] = []
    for enum in module.enums:
        body += ["", *_enum(enum, names)]
    for record in module.records:
        body += ["", *_record(record)]
    values = _GoValues(records, names)
    for const in module.constants:
        name = go_name(const.name)
        value = values.render(const.value, const.type, "")
        keyword = "const" if isinstance(const.type, Scalar) else "var"
        body += ["", *_doc(const.doc, name), f"{keyword} {name} = {value}"]
    body += _schemas(module, enums)
    head = [
        f"// Code generated by `python -m accord.contracts.codegen {command}` from the Accord",
        f"// contract {model.version} (`accord contracts export`). "
        "DO NOT EDIT: `make contracts-go`.",
        "",
        f"// {module.doc}",
        "",
        f"package {package}",
    ]
    return "\n".join(head + body) + "\n"


def render(model: ContractModel, package: str, command: str) -> dict[str, str]:
    """File name (relative to the generated directory) -> its Go text (unformatted)."""
    files = {f"{m.name}.go": _module(m, model, package, command) for m in model.modules}
    files["doc.go"] = (
        f"// Code generated by `python -m accord.contracts.codegen {command}`. DO NOT EDIT.\n\n"
        f"// Package {package} is the Accord contract {model.version}, generated from\n"
        "// `accord contracts export` by the generator that writes every language's package.\n"
        f"package {package}\n"
    )
    return files


def gofmt_binary() -> str:
    """Go's formatter: $GOFMT, on PATH, or beside `go` in its GOROOT."""
    found = os.environ.get("GOFMT") or shutil.which("gofmt")
    if found is None and (go := shutil.which("go") or _usual_go()) is not None:
        root = subprocess.run(
            [go, "env", "GOROOT"], capture_output=True, text=True, check=True, timeout=60
        ).stdout.strip()
        candidate = os.path.join(root, "bin", "gofmt")
        found = candidate if os.path.isfile(candidate) else None
    if found is None:
        raise FileNotFoundError("gofmt not found: install Go (or set GOFMT) to generate Go")
    return found


def _usual_go() -> str | None:
    return "/usr/local/go/bin/go" if os.path.isfile("/usr/local/go/bin/go") else None


def gofmt(files: Mapping[str, str]) -> dict[str, str]:
    """Each file as ``gofmt -s`` lays it out (the layout every Go tool expects)."""
    binary = gofmt_binary()
    out: dict[str, str] = {}
    for name, text in files.items():
        done = subprocess.run(
            [binary, "-s"], input=text, capture_output=True, text=True, timeout=60, check=False
        )
        if done.returncode != 0:
            raise ValueError(f"generated {name} is not valid Go: {done.stderr}")
        out[name] = done.stdout
    return out
