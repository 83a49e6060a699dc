"""The language-neutral model of the contract, read from the export's documents.

Every value here comes from accord.contracts.export (the documents ``accord contracts export``
writes): a status, a code or a key is never spelled in this module, so a change to the Python
contract reaches every language's package with a regeneration. The model names types and
tables; a renderer decides how a language spells them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.export import (
    extensions_document,
    keys_document,
    registry_document,
    schema_documents,
    status_document,
)


@dataclass(frozen=True)
class Scalar:
    kind: Literal["string", "int", "bool"]


@dataclass(frozen=True)
class EnumRef:
    name: str


@dataclass(frozen=True)
class RecordRef:
    name: str


@dataclass(frozen=True)
class ListOf:
    item: TypeExpr


@dataclass(frozen=True)
class MapOf:
    key: TypeExpr
    value: TypeExpr


TypeExpr = Scalar | EnumRef | RecordRef | ListOf | MapOf
STRING = Scalar("string")
INT = Scalar("int")
BOOL = Scalar("bool")


@dataclass(frozen=True)
class Enum:
    name: str
    values: tuple[str, ...]
    doc: str


@dataclass(frozen=True)
class Field:
    name: str
    type: TypeExpr
    optional: bool = False


@dataclass(frozen=True)
class Record:
    name: str
    fields: tuple[Field, ...]
    doc: str


@dataclass(frozen=True)
class Constant:
    name: str
    type: TypeExpr
    value: Any
    doc: str


@dataclass(frozen=True)
class SchemaType:
    """A JSON Schema document that becomes a type (and, where ``const`` is set, a value)."""

    type_name: str
    document: Mapping[str, Any]
    const: str | None = None


@dataclass(frozen=True)
class Module:
    name: str
    doc: str
    enums: tuple[Enum, ...] = ()
    records: tuple[Record, ...] = ()
    constants: tuple[Constant, ...] = ()
    schemas: tuple[SchemaType, ...] = field(default=())


@dataclass(frozen=True)
class ContractModel:
    version: str
    modules: tuple[Module, ...]


def _int_keys(table: Mapping[str, Any]) -> dict[int, Any]:
    return {int(k): v for k, v in table.items()}


def _status_module(doc: Mapping[str, Any]) -> Module:
    status, reason, a2a, code = (
        EnumRef("Status"),
        EnumRef("WaitingReason"),
        EnumRef("A2AState"),
        (EnumRef("ErrorCode")),
    )
    to_a2a_row = Record(
        "ToA2ARow",
        (
            Field("status", status),
            Field("waiting_reason", reason, optional=True),
            # A code, or "*": any code the rows before it did not name.
            Field("error_code", STRING, optional=True),
            # Set on the row of a decline; a row without it fits only a state that is no decline.
            Field("declined", BOOL, optional=True),
            Field("a2a", a2a),
        ),
        "One row of the contract -> A2A mapping: the first row that fits a state answers.",
    )
    from_a2a_row = Record(
        "FromA2ARow",
        (
            Field("status", status),
            Field("declined", BOOL, optional=True),  # the state reads as a decline
            Field("default_waiting_reason", reason, optional=True),
            Field("kept_waiting_reasons", ListOf(reason), optional=True),
            Field("default_error_code", code, optional=True),
            Field("kept_error_codes", ListOf(code), optional=True),
        ),
        "How an A2A state reads: a qualifier the peer sent is kept when listed, else the default.",
    )
    kept: Mapping[str, Mapping[str, list[str]]] = doc["from_a2a_kept"]
    constants = [
        Constant(
            "TERMINAL_STATUSES", ListOf(status), doc["terminal"], "Statuses a task never leaves."
        ),
        Constant(
            "TRANSITIONS",
            MapOf(status, ListOf(status)),
            doc["transitions"],
            "The statuses each status may become (STATUS-003).",
        ),
        Constant("TO_A2A", ListOf(RecordRef("ToA2ARow")), doc["to_a2a"], to_a2a_row.doc),
        Constant(
            "FROM_A2A",
            MapOf(a2a, RecordRef("FromA2ARow")),
            {
                a2a: {**row, **{f"kept_{k}": v for k, v in kept.get(a2a, {}).items()}}
                for a2a, row in doc["from_a2a"].items()
            },
            "A peer's A2A state as a contract state.",
        ),
    ]
    if "rejectable_codes" in doc:
        constants.append(
            Constant(
                "REJECTABLE_CODES",
                ListOf(code),
                doc["rejectable_codes"],
                "Codes that may qualify a decline (a retry of the same request cannot help).",
            )
        )
    return Module(
        "status",
        "The task lifecycle: statuses, legal transitions, the two-way A2A mapping.",
        enums=(
            Enum("Status", tuple(doc["statuses"]), "A task's contract status."),
            Enum("WaitingReason", tuple(doc["waiting_reasons"]), "Why a waiting task waits."),
            Enum("A2AState", tuple(doc["from_a2a"]), "A2A TaskState names on the wire."),
        ),
        records=(to_a2a_row, from_a2a_row),
        constants=tuple(constants),
    )


def _errors_module(doc: Mapping[str, Any]) -> Module:
    code, retry = EnumRef("ErrorCode"), EnumRef("RetryClass")
    spec = Record(
        "ErrorSpec",
        (
            Field("code", code),
            Field("retry", retry),
            Field("meaning", STRING),
            Field("jsonrpc_code", INT),
            Field("rest_status", INT),
            Field("rest_reason", STRING),
            Field("http_status", INT),
        ),
        "One row of the registry: what a code means for the caller and its wire forms.",
    )
    rows = doc["codes"]
    return Module(
        "errors",
        "The error registry: codes, retry classes, and every wire form of each code.",
        enums=(
            Enum("RetryClass", tuple(doc["retry_classes"]), "What a caller does with an error."),
            Enum("ErrorCode", tuple(r["code"] for r in rows), "The contract's error codes."),
        ),
        records=(spec,),
        constants=(
            Constant(
                "ERROR_DOMAIN", STRING, doc["error_domain"], "ErrorInfo domain of our own codes."
            ),
            Constant(
                "A2A_ERROR_DOMAIN",
                STRING,
                doc["a2a_error_domain"],
                "ErrorInfo domain of an error A2A names (its reason is A2A's).",
            ),
            Constant(
                "REGISTRY",
                MapOf(code, RecordRef("ErrorSpec")),
                {r["code"]: r for r in rows},
                spec.doc,
            ),
            Constant(
                "A2A_REASONS",
                MapOf(INT, STRING),
                _int_keys(doc["a2a_reasons"]),
                "A2A's ErrorInfo reason of each JSON-RPC code it defines.",
            ),
            Constant(
                "FOREIGN_JSONRPC_CODES",
                MapOf(INT, code),
                _int_keys(doc["foreign_jsonrpc_codes"]),
                "JSON-RPC codes a peer that is not Accord may send, read as ours.",
            ),
            Constant(
                "HTTP_STATUS_CODES",
                MapOf(INT, code),
                _int_keys(doc["http_status_codes"]),
                "How an HTTP error status without a contract body reads.",
            ),
            Constant(
                "HTTP_STATUS_CLASS_CODES",
                MapOf(STRING, code),
                doc["http_status_class_codes"],
                'Statuses HTTP_STATUS_CODES does not name, by class ("4xx", "5xx").',
            ),
        ),
    )


def _keys_module(keys: Mapping[str, str], extensions: Mapping[str, str]) -> Module:
    return Module(
        "keys",
        "Names on the wire: extension URIs, metadata keys, header names, paths.",
        constants=(
            Constant(
                "CONTRACT_VERSION",
                STRING,
                extensions["contract_version"],
                "Version of the Accord contract these files were generated from.",
            ),
            *(Constant(name, STRING, value, "") for name, value in keys.items()),
        ),
    )


def _type_name(file_name: str, document: Mapping[str, Any]) -> str:
    title = document.get("title")
    if isinstance(title, str):
        return title
    stem = file_name.removesuffix(".schema.json")
    return "".join(p.capitalize() for p in stem.split("-")) + "Payload"


def _schemas_module(documents: Mapping[str, Mapping[str, Any]]) -> Module:
    # An enum schema (status, error code...) is an enum the other modules already hold.
    schemas = tuple(
        SchemaType(
            _type_name(name, doc),
            doc,
            const=name.removesuffix(".schema.json").replace("-", "_").upper() + "_SCHEMA",
        )
        for name, doc in sorted(documents.items())
        if doc.get("type") == "object"
    )
    return Module(
        "schemas",
        "The contract's JSON formats (draft 2020-12) as types, and the schemas themselves.",
        schemas=schemas,
    )


def contract_model(export: Path | None = None) -> ContractModel:
    """The framework's contract, from the export's documents: those ``accord contracts export``
    wrote into ``export``, or (no directory) the same documents built in this process."""
    if export is None:
        status, errors = status_document(), registry_document()
        keys, extensions, schemas = keys_document(), extensions_document(), schema_documents()
    else:

        def read(rel: str) -> Any:
            return json.loads((export / rel).read_text(encoding="utf-8"))

        status, errors = read("status.json"), read("errors.json")
        keys, extensions = read("keys.json"), read("extensions.json")
        schemas = {p.name: read(f"schemas/{p.name}") for p in (export / "schemas").iterdir()}
    return ContractModel(
        version=status["contract_version"],
        modules=(
            _keys_module(keys, extensions),
            _errors_module(errors),
            _status_module(status),
            _schemas_module(schemas),
        ),
    )


def _pascal(text: str) -> str:
    words = text.replace(".", "-").replace("_", "-").split("-")
    return "".join(w[:1].upper() + w[1:] for w in words)


def app_model(export: Path | None = None) -> ContractModel:
    """An application's own types: each shipped agent's skill input and output schemas (from
    the agent contracts the export wrote under ``export``/agents, or built in this process)."""
    if export is None:
        agents = {n: a.model_dump(mode="json") for n, a in shipped_agent_contracts().items()}
        version = extensions_document()["contract_version"]
    else:
        agents = {
            p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in (export / "agents").glob("*.json")
        }
        extensions = json.loads((export / "extensions.json").read_text(encoding="utf-8"))
        version = extensions["contract_version"]
    schemas = []
    for name, agent in sorted(agents.items()):
        for skill in agent["skills"]:
            base = _pascal(name) + _pascal(skill["id"])
            schemas.append(SchemaType(base + "Input", skill["input_schema"]))
            schemas.append(SchemaType(base + "Output", skill["output_schema"]))
    return ContractModel(
        version=version,
        modules=(Module("skills", "Each skill's input and output.", schemas=tuple(schemas)),),
    )
