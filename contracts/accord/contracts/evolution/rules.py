"""The rules of contract evolution: one table, rule name -> compatible or breaking -> why.

A change is judged from the caller's side. An input is what a caller sends, so the new contract
must accept everything the old one accepted (narrowing breaks, widening is fine). An output is
what a caller receives and checks against the schema it was built with, so the new contract must
send nothing the old schema rejects (widening breaks, narrowing is fine). docs/contract-evolution.md
is written from this table; a test checks that every rule here has a row there and a fixture.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
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
    example: str  # one change the rule fires on, for docs/contract-evolution.md


_C, _B = Compatibility.COMPATIBLE, Compatibility.BREAKING

_ROWS: Final[tuple[tuple[str, Compatibility, str, str], ...]] = (
    # -- contracts and their parts ---------------------------------------------------------
    (
        "contract.added",
        _C,
        "A new agent or tool contract: nobody calls it yet.",
        "tools/tickets.list.yaml appears",
    ),
    (
        "contract.removed",
        _B,
        "An agent or tool contract is gone: its callers have nothing to call.",
        "tools/tickets.get.yaml is deleted",
    ),
    ("skill.added", _C, "A new skill on an agent.", "triage gains skill ticket.explain"),
    (
        "skill.removed",
        _B,
        "A skill is gone: a task sent to it fails.",
        "triage drops skill ticket.route",
    ),
    (
        "doc.changed",
        _C,
        "Prose only (description, title, skill name, tags, examples).",
        "description: 'Look up a ticket' -> 'Facts about one ticket'",
    ),
    # -- inputs (what a caller sends) -------------------------------------------------------
    (
        "input.required_added",
        _B,
        "An input field is newly required: old callers do not send it.",
        "required: [ticket_id] -> [ticket_id, user_id]",
    ),
    (
        "input.required_removed",
        _C,
        "An input field is no longer required.",
        "required: [ticket_id, reason] -> [ticket_id]",
    ),
    (
        "input.property_added",
        _C,
        "A new optional input field.",
        "properties gain since_days (optional)",
    ),
    (
        "input.property_removed",
        _B,
        "An input field is gone: old callers still send it.",
        "properties lose evidence",
    ),
    (
        "input.property_renamed",
        _B,
        "An input field has a new name (the same schema, moved).",
        "amount -> amount_cents, same schema",
    ),
    (
        "input.closed",
        _B,
        "The input no longer accepts unknown fields (additionalProperties).",
        "additionalProperties: (absent) -> false",
    ),
    (
        "input.opened",
        _C,
        "The input now accepts unknown fields.",
        "additionalProperties: false -> true",
    ),
    (
        "input.type_narrowed",
        _B,
        "An input field accepts fewer JSON types.",
        "evidence: [string, null] -> string",
    ),
    (
        "input.type_widened",
        _C,
        "An input field accepts more JSON types.",
        "requested_cents: integer -> [integer, null]",
    ),
    (
        "input.enum_value_removed",
        _B,
        "An input enum lost a value old callers may send.",
        "reason enum loses other",
    ),
    (
        "input.enum_value_added",
        _C,
        "An input enum gained a value.",
        "reason enum gains duplicate_charge",
    ),
    (
        "input.pattern_changed",
        _B,
        "An input pattern is new or different: old values may fail it.",
        "ticket_id: ^T-[0-9]{4,10}$ -> ^T-[0-9]{6}$",
    ),
    (
        "input.pattern_removed",
        _C,
        "An input pattern is gone: more values are accepted.",
        "ticket_id loses its pattern",
    ),
    (
        "input.limit_narrowed",
        _B,
        "An input bound is new or tighter (maxLength, minimum, ...).",
        "reason maxLength: 500 -> 200",
    ),
    (
        "input.limit_widened",
        _C,
        "An input bound is looser or gone.",
        "reason maxLength: 500 -> 1000",
    ),
    (
        "input.schema_changed",
        _B,
        "Another change of an input schema keyword ($ref, anyOf, ...).",
        "ticket: {$ref: '#/$defs/ticket'} -> {$ref: '#/$defs/ticket2'}",
    ),
    # -- outputs (what a caller receives) ---------------------------------------------------
    (
        "output.property_added",
        _C,
        "A new output field in an open object: old callers ignore it.",
        "an open object gains a field",
    ),
    (
        "output.property_added_closed",
        _B,
        "A new output field in a closed object: an old caller's schema rejects it.",
        "triage output (closed) gains params",
    ),
    (
        "output.property_removed",
        _B,
        "An output field is gone: callers read it.",
        "tickets.get output loses comments",
    ),
    (
        "output.property_renamed",
        _B,
        "An output field has a new name: callers read the old one.",
        "explanation -> message, same schema",
    ),
    (
        "output.required_removed",
        _B,
        "An output field may now be missing: callers read it.",
        "required: [eligible, rule, explanation] -> [eligible, rule]",
    ),
    (
        "output.required_added",
        _C,
        "An output field is now always sent.",
        "required gains comments (already listed)",
    ),
    (
        "output.opened",
        _B,
        "The output may now carry unknown fields old callers reject.",
        "additionalProperties: false -> (absent)",
    ),
    (
        "output.closed",
        _C,
        "The output no longer carries unknown fields.",
        "additionalProperties: (absent) -> false",
    ),
    (
        "output.type_widened",
        _B,
        "An output field may have a JSON type old callers reject.",
        "max_priority: integer -> [integer, null]",
    ),
    (
        "output.type_narrowed",
        _C,
        "An output field has fewer JSON types.",
        "approved_by: [string, null] -> string",
    ),
    (
        "output.enum_value_added",
        _B,
        "An output enum gained a value the old closed enum rejects.",
        "decision enum gains already_closed",
    ),
    ("output.enum_value_removed", _C, "An output enum lost a value.", "risk enum loses medium"),
    (
        "output.pattern_changed",
        _B,
        "An output pattern is different or gone: old checks may fail.",
        "receipt_id: ^R- -> ^RC-",
    ),
    (
        "output.pattern_added",
        _C,
        "An output pattern is new: fewer values are sent.",
        "receipt_id gains pattern ^R-",
    ),
    (
        "output.limit_widened",
        _B,
        "An output bound is looser or gone: old checks may fail.",
        "score maximum: 1 -> 100",
    ),
    (
        "output.limit_narrowed",
        _C,
        "An output bound is new or tighter.",
        "comments maxItems: (absent) -> 100",
    ),
    (
        "output.schema_changed",
        _B,
        "Another change of an output schema keyword ($ref, anyOf, ...).",
        "created_at format: date-time -> date",
    ),
    # -- behaviour ---------------------------------------------------------------------------
    (
        "error.added",
        _C,
        "A new declared error: its retry class is in the registry.",
        "errors gain PERMISSION_DENIED",
    ),
    (
        "error.removed",
        _B,
        "A declared error is gone: callers that branch on it lose the case.",
        "errors lose NOT_FOUND",
    ),
    (
        "waiting.added",
        _B,
        "A new waiting reason: old callers cannot answer it.",
        "waiting_reasons: [input] -> [input, approval]",
    ),
    ("waiting.removed", _C, "A waiting reason is gone.", "waiting_reasons: [input] -> []"),
    (
        "side_effect.changed",
        _B,
        "The tool's side-effect class changed (none, reversible, ...).",
        "side_effect: reversible_write -> irreversible_write",
    ),
    (
        "idempotency.changed",
        _B,
        "The tool's idempotency-key requirement changed.",
        "idempotency_key: required -> optional",
    ),
    (
        "access.narrowed",
        _B,
        "Fewer principals may call the tool (an allow entry or access added).",
        "access added, or allow loses {role: customer}",
    ),
    ("access.widened", _C, "More principals may call the tool.", "allow gains {role: approver}"),
    (
        "access.changed",
        _B,
        "The field the tool takes the customer or approver from changed.",
        "customer_field: customer_id -> buyer_id",
    ),
    ("streaming.removed", _B, "The agent no longer streams.", "streaming: true -> false"),
    ("streaming.added", _C, "The agent now streams.", "streaming: false -> true"),
    ("mode.removed", _B, "An input or output media type is gone.", "input_modes lose text/plain"),
    ("mode.added", _C, "A new input or output media type.", "output_modes gain image/png"),
    (
        "port.changed",
        _C,
        "The documented default port changed (callers use the URL).",
        "default_port: 8701 -> 8703",
    ),
    # -- the registry (errors.py and status.py, through specs/registry.json) -------------------
    ("registry.error_added", _C, "A new error code in the registry.", "a new code QUOTA_EXCEEDED"),
    (
        "registry.error_removed",
        _B,
        "An error code is gone from the registry.",
        "OUT_OF_STOCK leaves the registry",
    ),
    (
        "registry.retry_changed",
        _B,
        "An error code's retry class changed: callers act otherwise.",
        "UNAVAILABLE: retry -> stop",
    ),
    (
        "registry.wire_changed",
        _B,
        "An error code's JSON-RPC code or HTTP status changed.",
        "NOT_FOUND http_status: 404 -> 410",
    ),
    (
        "registry.status_mapping_changed",
        _B,
        "The contract status <-> A2A state mapping changed.",
        "A2A REJECTED read as completed",
    ),
    (
        "served.added",
        _C,
        "The contract serves one more major version side by side (also_serves).",
        "also_serves: [] -> [1.4.0] on a 2.0.0 contract",
    ),
    (
        "served.dropped",
        _B,
        "A major version served side by side is gone: its clients get VERSION_UNSUPPORTED.",
        "also_serves: [1.4.0] -> [] on a 2.0.0 contract",
    ),
    # -- versions ------------------------------------------------------------------------------
    ("version.bumped", _C, "The version went up.", "1.1.0 -> 1.2.0"),
    (
        "version.major_bump_missing",
        _B,
        "A breaking change without a major version bump.",
        "an input field newly required, version 1.1.0 -> 1.2.0",
    ),
    (
        "version.bump_missing",
        _B,
        "A change that is not prose only, without a version bump.",
        "errors gain UNAVAILABLE, version stays 1.1.0",
    ),
    ("version.downgraded", _B, "The version went down.", "1.2.0 -> 1.1.0"),
)

RULES: Final[Mapping[str, Rule]] = {
    name: Rule(name=name, compatibility=compatibility, description=description, example=example)
    for name, compatibility, description, example in _ROWS
}


def rules_markdown() -> str:
    """The rules table of docs/contract-evolution.md (a test keeps the page in step)."""
    lines = ["| rule | class | what changed | example |", "|---|---|---|---|"]
    for r in RULES.values():
        example = r.example.replace("|", "\\|")
        lines.append(f"| `{r.name}` | {r.compatibility.value} | {r.description} | {example} |")
    return "\n".join(lines) + "\n"


def rule(name: str) -> Rule:
    """The row of a rule (raises KeyError for a rule not in the table)."""
    return RULES[name]


RULES_BEGIN: Final = "<!-- rules:begin (generated) -->\n"
RULES_END: Final = "<!-- rules:end -->"


def refresh_page(page: str) -> str:
    """``page`` with the generated rules table between its markers replaced by the current one."""
    head, rest = page.split(RULES_BEGIN, 1)
    _, tail = rest.split(RULES_END, 1)
    return head + RULES_BEGIN + rules_markdown() + RULES_END + tail


if __name__ == "__main__":  # `make docs`: python -m accord.contracts.evolution.rules PAGE
    target = Path(sys.argv[1])
    target.write_text(refresh_page(target.read_text(encoding="utf-8")), encoding="utf-8")
