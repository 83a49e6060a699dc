"""What a pydantic validation error says, read once for every boundary that reports one.

A caller is told which field broke which rule, never pydantic's full text (it may echo the
caller's values back).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError


@dataclass(frozen=True, slots=True)
class BrokenField:
    field: str  # dotted location ("budget.units"), or the root's name
    message: str  # pydantic's message for it
    rule: str  # pydantic's error type ("missing", "greater_than", ...)


def first_broken(exc: ValidationError, root: str = "(root)") -> BrokenField:
    """The first field ``exc`` names (``root`` when the whole value is wrong)."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or root
    return BrokenField(field=field, message=first["msg"], rule=first["type"])
