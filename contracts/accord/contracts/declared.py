"""Code that names what a contract declares: a field's schema, pattern or enum, checked.

An application writes its id formats and enums once, in its YAML specs, and names them in
Python through these: an enum class carries :func:`declared_by` (its members must be the spec's
``enum``, in order) and a model :func:`shaped_by` (its fields must be the schema's), so the
import fails, naming both, when a spec and its code drift apart. :func:`tool_field` and
:func:`skill_field` read a field of any registered contract (accord.contracts.spec_folders).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.tools import shipped_tool_contracts

E = TypeVar("E", bound=StrEnum)
B = TypeVar("B", bound=BaseModel)


class DeclarationError(ValueError):
    """Code names a field, pattern or enum the shipped specs do not declare, or disagrees with
    them."""


def field_of(schema: Mapping[str, Any], field: str, where: str) -> Mapping[str, Any]:
    """The JSON Schema of top-level property ``field`` of an object schema."""
    props = schema.get("properties")
    found = props.get(field) if isinstance(props, Mapping) else None
    if not isinstance(found, Mapping):
        raise DeclarationError(f"{where} declares no property {field!r}")
    return found


def _side(output: bool) -> str:
    return "output" if output else "input"


def tool_field(tool: str, field: str, *, output: bool = False) -> Mapping[str, Any]:
    """The schema of ``field`` in a shipped tool's input (or output) schema."""
    contract = shipped_tool_contracts()[tool]
    schema = contract.output_schema if output else contract.input_schema
    return field_of(schema, field, f"tool {tool} {_side(output)}")


def skill_field(agent: str, skill: str, field: str, *, output: bool = False) -> Mapping[str, Any]:
    """The schema of ``field`` in a shipped agent skill's input (or output) schema."""
    found = shipped_agent_contracts()[agent].skill(skill)
    schema = found.output_schema if output else found.input_schema
    return field_of(schema, field, f"agent {agent} skill {skill} {_side(output)}")


def pattern_of(field: Mapping[str, Any]) -> str:
    pattern = field.get("pattern")
    if not isinstance(pattern, str):
        raise DeclarationError(f"no pattern declared in {dict(field)!r}")
    return pattern


def enum_of(field: Mapping[str, Any]) -> tuple[str, ...]:
    values = field.get("enum")
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise DeclarationError(f"no string enum declared in {dict(field)!r}")
    return tuple(values)


def declared_by(values: Sequence[str]) -> Callable[[type[E]], type[E]]:
    """Class decorator: the enum's values must be the spec's, in the spec's order."""

    def check(cls: type[E]) -> type[E]:
        mine = [m.value for m in cls]
        if mine != list(values):
            raise DeclarationError(f"{cls.__name__} has {mine}; its spec declares {list(values)}")
        return cls

    return check


def shaped_by(schema: Mapping[str, Any], where: str) -> Callable[[type[B]], type[B]]:
    """Class decorator: the model has exactly the object schema's properties, requires no field
    the schema leaves optional, and forbids extra fields when the schema does. Each nested
    object model is checked with its own decorator (the schema's subschema)."""

    def check(cls: type[B]) -> type[B]:
        props = schema.get("properties")
        declared = set(props) if isinstance(props, Mapping) else set()
        mine = {f.alias or name for name, f in cls.model_fields.items()}
        required = {f.alias or name for name, f in cls.model_fields.items() if f.is_required()}
        problems = []
        if mine != declared:
            problems.append(f"fields {sorted(mine ^ declared)} are not in both")
        if extra := required - set(schema.get("required", ())):
            problems.append(f"requires {sorted(extra)}, which the schema leaves optional")
        if (
            schema.get("additionalProperties") is False
            and cls.model_config.get("extra") != "forbid"
        ):
            problems.append("allows extra fields, which the schema forbids")
        if problems:
            raise DeclarationError(f"{cls.__name__} is not {where}: {'; '.join(problems)}")
        return cls

    return check
