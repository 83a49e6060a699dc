"""The rules of contract evolution: one table, rule name -> compatible or breaking -> why.

A change is judged from the caller's side. An input is what a caller sends, so the new contract
must accept everything the old one accepted (narrowing breaks, widening is fine). An output is
what a caller receives and checks against the schema it was built with, so the new contract must
send nothing the old schema rejects (widening breaks, narrowing is fine). docs/contract-evolution.md
is written from this table; a test checks that every rule here has a row there and a fixture.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict


class Compatibility(StrEnum):
    COMPATIBLE = "compatible"
    BREAKING = "breaking"


class Rule(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    compatibility: Compatibility
    description: str


_C, _B = Compatibility.COMPATIBLE, Compatibility.BREAKING

_ROWS: Final[tuple[tuple[str, Compatibility, str], ...]] = (
    # -- contracts and their parts ---------------------------------------------------------
    ("contract.added", _C, "A new agent or tool contract: nobody calls it yet."),
    (
        "contract.removed",
        _B,
        "An agent or tool contract is gone: its callers have nothing to call.",
    ),
    ("skill.added", _C, "A new skill on an agent."),
    ("skill.removed", _B, "A skill is gone: a task sent to it fails."),
    ("doc.changed", _C, "Prose only (description, title, skill name, tags, examples)."),
    # -- inputs (what a caller sends) -------------------------------------------------------
    ("input.required_added", _B, "An input field is newly required: old callers do not send it."),
    ("input.required_removed", _C, "An input field is no longer required."),
    ("input.property_added", _C, "A new optional input field."),
    ("input.property_removed", _B, "An input field is gone: old callers still send it."),
    ("input.property_renamed", _B, "An input field has a new name (the same schema, moved)."),
    ("input.closed", _B, "The input no longer accepts unknown fields (additionalProperties)."),
    ("input.opened", _C, "The input now accepts unknown fields."),
    ("input.type_narrowed", _B, "An input field accepts fewer JSON types."),
    ("input.type_widened", _C, "An input field accepts more JSON types."),
    ("input.enum_value_removed", _B, "An input enum lost a value old callers may send."),
    ("input.enum_value_added", _C, "An input enum gained a value."),
    ("input.pattern_changed", _B, "An input pattern is new or different: old values may fail it."),
    ("input.pattern_removed", _C, "An input pattern is gone: more values are accepted."),
    ("input.limit_narrowed", _B, "An input bound is new or tighter (maxLength, minimum, ...)."),
    ("input.limit_widened", _C, "An input bound is looser or gone."),
    ("input.schema_changed", _B, "Another change of an input schema keyword ($ref, anyOf, ...)."),
    # -- outputs (what a caller receives) ---------------------------------------------------
    ("output.property_added", _C, "A new output field in an open object: old callers ignore it."),
    (
        "output.property_added_closed",
        _B,
        "A new output field in a closed object: an old caller's schema rejects it.",
    ),
    ("output.property_removed", _B, "An output field is gone: callers read it."),
    ("output.property_renamed", _B, "An output field has a new name: callers read the old one."),
    ("output.required_removed", _B, "An output field may now be missing: callers read it."),
    ("output.required_added", _C, "An output field is now always sent."),
    ("output.opened", _B, "The output may now carry unknown fields old callers reject."),
    ("output.closed", _C, "The output no longer carries unknown fields."),
    ("output.type_widened", _B, "An output field may have a JSON type old callers reject."),
    ("output.type_narrowed", _C, "An output field has fewer JSON types."),
    ("output.enum_value_added", _B, "An output enum gained a value the old closed enum rejects."),
    ("output.enum_value_removed", _C, "An output enum lost a value."),
    ("output.pattern_changed", _B, "An output pattern is different or gone: old checks may fail."),
    ("output.pattern_added", _C, "An output pattern is new: fewer values are sent."),
    ("output.limit_widened", _B, "An output bound is looser or gone: old checks may fail."),
    ("output.limit_narrowed", _C, "An output bound is new or tighter."),
    ("output.schema_changed", _B, "Another change of an output schema keyword ($ref, anyOf, ...)."),
    # -- behaviour ---------------------------------------------------------------------------
    ("error.added", _C, "A new declared error: its retry class is in the registry."),
    ("error.removed", _B, "A declared error is gone: callers that branch on it lose the case."),
    ("waiting.added", _B, "A new waiting reason: old callers cannot answer it."),
    ("waiting.removed", _C, "A waiting reason is gone."),
    ("side_effect.changed", _B, "The tool's side-effect class changed (none, reversible, ...)."),
    ("idempotency.changed", _B, "The tool's idempotency-key requirement changed."),
    ("access.narrowed", _B, "Fewer principals may call the tool (an allow entry or access added)."),
    ("access.widened", _C, "More principals may call the tool."),
    ("access.changed", _B, "The field the tool takes the customer or approver from changed."),
    ("streaming.removed", _B, "The agent no longer streams."),
    ("streaming.added", _C, "The agent now streams."),
    ("mode.removed", _B, "An input or output media type is gone."),
    ("mode.added", _C, "A new input or output media type."),
    ("port.changed", _C, "The documented default port changed (callers use the URL)."),
    # -- the registry (errors.py and status.py, through specs/registry.json) -------------------
    ("registry.error_added", _C, "A new error code in the registry."),
    ("registry.error_removed", _B, "An error code is gone from the registry."),
    ("registry.retry_changed", _B, "An error code's retry class changed: callers act otherwise."),
    ("registry.wire_changed", _B, "An error code's JSON-RPC code or HTTP status changed."),
    ("registry.status_mapping_changed", _B, "The contract status <-> A2A state mapping changed."),
    # -- versions ------------------------------------------------------------------------------
    ("version.bumped", _C, "The version went up."),
    ("version.major_bump_missing", _B, "A breaking change without a major version bump."),
    ("version.bump_missing", _B, "A change that is not prose only, without a version bump."),
    ("version.downgraded", _B, "The version went down."),
)

RULES: Final[Mapping[str, Rule]] = {
    name: Rule(name=name, compatibility=compatibility, description=description)
    for name, compatibility, description in _ROWS
}


def rule(name: str) -> Rule:
    """The row of a rule (raises KeyError for a rule not in the table)."""
    return RULES[name]
