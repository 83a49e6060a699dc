"""What a validation error says, read once for every boundary that reports one.

A caller is told which field broke which rule, never pydantic's full text (it may echo the
caller's values back). Where a JSON Schema error is (:func:`schema_path`) is spelled here only:
``items/0/sku`` (``(root)`` for the value itself) where Accord names a field, the same as a
JSON pointer (``/items/0/sku``) where MCP callers read ``where``.
"""

from __future__ import annotations

from dataclasses import dataclass

from jsonschema import exceptions as schema_errors
from pydantic import ValidationError

ROOT = "(root)"  # the value itself, where a path would be empty


@dataclass(frozen=True, slots=True)
class BrokenField:
    field: str  # dotted location ("budget.units"), or the root's name
    message: str  # pydantic's message for it
    rule: str  # pydantic's error type ("missing", "greater_than", ...)


def first_broken(exc: ValidationError, root: str = ROOT) -> BrokenField:
    """The first field ``exc`` names (``root`` when the whole value is wrong)."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or root
    return BrokenField(field=field, message=first["msg"], rule=first["type"])


def schema_path(
    error: schema_errors.ValidationError | schema_errors.SchemaError, *, pointer: bool = False
) -> str:
    """Where in the value (a schema, for a SchemaError) ``error`` is: its path joined by ``/``,
    :data:`ROOT` when empty; with ``pointer``, as a JSON pointer (``/`` for the root)."""
    joined = "/".join(str(p) for p in error.absolute_path)
    return f"/{joined}" if pointer else joined or ROOT
