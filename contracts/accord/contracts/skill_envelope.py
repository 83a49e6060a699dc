"""What a skill does with the delegation envelope it is given: the ``envelope`` section of a
skill in an agent contract (contract 1.3, requirements ENV-007 and ENV-008).

::

    envelope:
      constraints:                    # the constraints the skill honours, by key
        max_charge_cents:
          type: integer               # the JSON type of the value: string, integer, boolean
          minimum: 0
          description: no charge above this many cents is made
          forwarded_to: []            # the children ("agent/skill") that receive it as given
      context_refs:                   # absent: the skill reads no context refs
        description: references to the customer's evidence (photos, documents)
        forwarded_to: [triage/ticket.route]
      goal:                           # absent: the goal is a label (logs, traces), not read
        description: ...
        forwarded_to: []

A constraint the skill does not declare, or one of the wrong type, is INVALID_INPUT before any
work (ENV-007): a caller never believes a constraint applied when it did not. Context refs
given to a skill that reads none are INVALID_INPUT too (ENV-008). A child receives only what
``forwarded_to`` names for it, and only if the child's own skill declares it (otherwise the
child would refuse it); everything else of the caller's envelope stops at this agent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Final, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from accord.contracts.errors import AccordError, ErrorCode

CONSTRAINT_KEY: Final = r"^[a-z][a-z0-9_]{0,62}$"
CHILD_SKILL: Final = r"^[a-z][a-z0-9-]{0,62}/[a-z][a-z0-9_.-]{0,62}$"
V = TypeVar("V")


class ConstraintType(StrEnum):
    """The JSON types an envelope constraint may have (the envelope allows no others)."""

    STRING = "string"
    INTEGER = "integer"
    BOOLEAN = "boolean"


class DeclaredConstraint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ConstraintType
    description: str = Field(min_length=1, max_length=500)
    minimum: int | None = None  # integers only
    forwarded_to: list[str] = Field(default_factory=list, max_length=16)

    @model_validator(mode="after")
    def _minimum_for_integers(self) -> DeclaredConstraint:
        if self.minimum is not None and self.type is not ConstraintType.INTEGER:
            raise ValueError("only an integer constraint takes a minimum")
        for child in self.forwarded_to:
            _check_child(child)
        return self

    def problem(self, value: object) -> str | None:
        """Why ``value`` does not fit this declaration, or None."""
        if self.type is ConstraintType.BOOLEAN:
            return None if isinstance(value, bool) else "must be a boolean"
        if self.type is ConstraintType.STRING:
            return None if isinstance(value, str) else "must be a string"
        if not isinstance(value, int) or isinstance(value, bool):
            return "must be an integer"
        if self.minimum is not None and value < self.minimum:
            return f"must be at least {self.minimum}"
        return None


class ReadField(BaseModel):
    """A field of the envelope the skill reads (goal, context refs), and who it reaches."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(min_length=1, max_length=500)
    forwarded_to: list[str] = Field(default_factory=list, max_length=16)

    @model_validator(mode="after")
    def _children(self) -> ReadField:
        for child in self.forwarded_to:
            _check_child(child)
        return self


class EnvelopeUse(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    constraints: dict[str, DeclaredConstraint] = Field(default_factory=dict, max_length=32)
    context_refs: ReadField | None = None
    goal: ReadField | None = None

    @model_validator(mode="after")
    def _keys(self) -> EnvelopeUse:
        for key in self.constraints:
            if not re.match(CONSTRAINT_KEY, key):
                raise ValueError(f"constraint key {key!r} must match {CONSTRAINT_KEY}")
        return self

    def check(self, skill: str, constraints: Mapping[str, object], context_refs: list[str]) -> None:
        """INVALID_INPUT unless every constraint is declared with a value of its type and
        context refs are given only to a skill that reads them; the message names the key and
        the rule, never the caller's value."""
        for key in sorted(constraints):
            declared = self.constraints.get(key)
            field = f"envelope.constraints.{key}"
            if declared is None:
                raise AccordError(
                    ErrorCode.INVALID_INPUT,
                    f"skill {skill} does not honour the constraint {key!r} "
                    f"(it honours: {', '.join(sorted(self.constraints)) or 'none'})",
                    {"field": field, "rule": "undeclared", "requirement": "ENV-007"},
                )
            problem = declared.problem(constraints[key])
            if problem is not None:
                raise AccordError(
                    ErrorCode.INVALID_INPUT,
                    f"constraint {key!r} {problem}",
                    {"field": field, "rule": declared.type.value, "requirement": "ENV-007"},
                )
        if context_refs and self.context_refs is None:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"skill {skill} reads no context refs",
                {"field": "envelope.context_refs", "rule": "unread", "requirement": "ENV-008"},
            )

    def forwarded(self, child: str, constraints: Mapping[str, V]) -> dict[str, V]:
        """The constraints (of those given) that reach ``child`` ("agent/skill")."""
        return {
            key: value
            for key, value in constraints.items()
            if key in self.constraints and child in self.constraints[key].forwarded_to
        }

    def forwards_context_refs(self, child: str) -> bool:
        return self.context_refs is not None and child in self.context_refs.forwarded_to

    def forwards_goal(self, child: str) -> bool:
        return self.goal is not None and child in self.goal.forwarded_to


def _check_child(child: str) -> None:
    if not re.match(CHILD_SKILL, child):
        raise ValueError(f"forwarded_to names a child as 'agent/skill', not {child!r}")
