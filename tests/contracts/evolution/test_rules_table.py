"""Every rule of the table, both ways: a small change that triggers it, then the same change
undone. A compatible change with a minor bump yields nothing breaking at all; a breaking one
yields its rule; undoing it yields the rule again only when the rule is its own reverse."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from accord.contracts.evolution.contract_diff import Contract, diff_contracts
from accord.contracts.evolution.findings import Finding
from accord.contracts.evolution.rules import RULES, Compatibility

from .fixtures import AGENT, TOOL, agent, tool

Doc = dict[str, Any]
Mutation = Callable[[Doc], None]


def _in(doc: Doc) -> Doc:
    props: Doc = doc["input_schema"]["properties"]
    return props


def _out(doc: Doc) -> Doc:
    props: Doc = doc["output_schema"]["properties"]
    return props


def _skill_out(doc: Doc) -> Doc:
    schema: Doc = doc["skills"][0]["output_schema"]
    return schema


def _rename(props: Doc, old: str, new: str) -> None:
    props[new] = props.pop(old)


# rule -> (which fixture, the change). Rules about contract sets and versions are tested in
# test_diff_sets.py and below, the registry in test_registry_snapshot.py.
CASES: dict[str, tuple[str, Mutation]] = {
    "skill.added": (
        "agent",
        lambda d: d["skills"].append({**copy.deepcopy(d["skills"][0]), "id": "demo.new"}),
    ),
    "skill.removed": ("agent", lambda d: d["skills"].pop()),
    "doc.changed": ("tool", lambda d: d.update(description="Another demo tool.")),
    "input.required_added": ("tool", lambda d: d["input_schema"]["required"].append("note")),
    "input.required_removed": ("tool", lambda d: d["input_schema"]["required"].remove("kind")),
    "input.property_added": ("tool", lambda d: _in(d).update(flag={"type": "boolean"})),
    "input.property_removed": ("tool", lambda d: _in(d).pop("count")),
    "input.property_renamed": ("tool", lambda d: _rename(_in(d), "count", "quantity")),
    "input.closed": ("tool", lambda d: _in(d)["meta"].update(additionalProperties=False)),
    "input.opened": ("tool", lambda d: d["input_schema"].update(additionalProperties=True)),
    "input.type_narrowed": ("tool", lambda d: _in(d)["note"].update(type="string")),
    "input.type_widened": ("tool", lambda d: _in(d)["count"].update(type=["integer", "null"])),
    "input.enum_value_removed": ("tool", lambda d: _in(d)["kind"].update(enum=["a"])),
    "input.enum_value_added": ("tool", lambda d: _in(d)["kind"].update(enum=["a", "b", "c"])),
    "input.pattern_changed": (
        "tool",
        lambda d: _in(d)["customer_id"].update(pattern="^C-[0-9]{2}$"),
    ),
    "input.pattern_removed": ("tool", lambda d: _in(d)["customer_id"].pop("pattern")),
    "input.limit_narrowed": ("tool", lambda d: _in(d)["note"].update(maxLength=50)),
    "input.limit_widened": ("tool", lambda d: _in(d)["note"].update(maxLength=200)),
    "input.schema_changed": ("tool", lambda d: _in(d)["note"].update(format="email")),
    "output.property_added": (
        "tool",
        lambda d: _out(d)["extra"]["properties"].update(y={"type": "string"}),
    ),
    "output.property_added_closed": ("tool", lambda d: _out(d).update(fee={"type": "integer"})),
    "output.property_removed": ("tool", lambda d: _out(d).pop("amount")),
    "output.property_renamed": ("tool", lambda d: _rename(_out(d), "amount", "total")),
    "output.required_removed": ("tool", lambda d: d["output_schema"]["required"].remove("state")),
    "output.required_added": ("tool", lambda d: d["output_schema"]["required"].append("amount")),
    "output.opened": ("tool", lambda d: d["output_schema"].update(additionalProperties=True)),
    "output.closed": ("tool", lambda d: _out(d)["extra"].update(additionalProperties=False)),
    "output.type_widened": ("tool", lambda d: _out(d)["amount"].update(type=["integer", "null"])),
    "output.type_narrowed": ("tool", lambda d: _out(d)["note"].update(type="string")),
    "output.enum_value_added": (
        "tool",
        lambda d: _out(d)["state"].update(enum=["done", "queued", "lost"]),
    ),
    "output.enum_value_removed": ("tool", lambda d: _out(d)["state"].update(enum=["done"])),
    "output.pattern_changed": ("tool", lambda d: _out(d)["id"].update(pattern="^X-")),
    "output.pattern_added": ("tool", lambda d: _out(d)["note"].update(pattern="^n")),
    "output.limit_widened": ("tool", lambda d: _out(d)["amount"].update(maximum=2000)),
    "output.limit_narrowed": ("tool", lambda d: _out(d)["amount"].update(maximum=500)),
    "output.schema_changed": (
        "agent",
        lambda d: _skill_out(d)["properties"]["a"].update(format="uri"),
    ),
    "error.added": ("tool", lambda d: d["errors"].append("UNAVAILABLE")),
    "error.removed": ("tool", lambda d: d["errors"].remove("NOT_FOUND")),
    "waiting.added": ("agent", lambda d: d["waiting_reasons"].append("approval")),
    "waiting.removed": ("agent", lambda d: d["waiting_reasons"].clear()),
    "side_effect.changed": ("tool", lambda d: d.update(side_effect="irreversible_write")),
    "idempotency.changed": ("tool", lambda d: d.update(idempotency_key="optional")),
    "access.narrowed": ("tool", lambda d: d["access"]["allow"].pop(0)),
    "access.widened": ("tool", lambda d: d["access"]["allow"].append({"role": "approver"})),
    "access.changed": ("tool", lambda d: d["access"].update(approver_field="note")),
    "streaming.removed": ("agent", lambda d: d.update(streaming=False)),
    "mode.removed": ("agent", lambda d: d.update(input_modes=["application/json"])),
    "port.changed": ("agent", lambda d: d.update(default_port=8798)),
    "served.dropped": ("served", lambda d: d.update(also_serves=[])),
}
# The reverse of a removal is the matching addition: tested through the undo.
REVERSED = {
    "streaming.added": "streaming.removed",
    "mode.added": "mode.removed",
    "served.added": "served.dropped",
}
# Rules that are their own reverse (a change either way is the same kind of change).
SELF_REVERSE = {
    "doc.changed",
    "input.property_renamed",
    "output.property_renamed",
    "input.pattern_changed",
    "output.pattern_changed",
    "input.schema_changed",
    "output.schema_changed",
    "side_effect.changed",
    "idempotency.changed",
    "access.changed",
    "port.changed",
}
SET_LEVEL = {"contract.added", "contract.removed"}
VERSION_RULES = {r for r in RULES if r.startswith("version.")}
REGISTRY_RULES = {r for r in RULES if r.startswith("registry.")}


def _pair(rule: str) -> tuple[Contract, Contract]:
    kind, mutate = CASES[rule]
    base = copy.deepcopy(TOOL if kind == "tool" else AGENT)
    if kind == "served":  # an agent at 3.0.0 that still serves 2.x clients
        base.update(version="3.0.0", also_serves=["2.4.0"])
    changed = copy.deepcopy(base)
    mutate(changed)
    # Announce the change the way the rules ask, so only the rule under test can break.
    breaking = RULES[rule].compatibility is Compatibility.BREAKING
    changed["version"] = "9.0.0" if breaking else base["version"].replace(".0.0", ".1.0")
    build = tool if kind == "tool" else agent
    return build(base), build(changed)


def _rules(found: list[Finding]) -> set[str]:
    return {f.rule for f in found}


def test_every_rule_has_a_case() -> None:
    covered = set(CASES) | set(REVERSED) | SET_LEVEL | VERSION_RULES | REGISTRY_RULES
    assert covered == set(RULES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_forward(rule: str) -> None:
    old, new = _pair(rule)
    found = diff_contracts(old, new)
    assert rule in _rules(found)
    if RULES[rule].compatibility is Compatibility.COMPATIBLE:
        assert [f for f in found if f.breaking] == []


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_undone(rule: str) -> None:
    old, new = _pair(rule)
    # Undone, with its own version bump so only the schema rules speak.
    back = new.model_copy(update={"version": "10.0.0"})
    undone = diff_contracts(back, old.model_copy(update={"version": "11.0.0"}))
    assert (rule in _rules(undone)) is (rule in SELF_REVERSE)


@pytest.mark.parametrize(("rule", "removal"), sorted(REVERSED.items()))
def test_additions_are_undone_removals(rule: str, removal: str) -> None:
    old, new = _pair(removal)
    found = diff_contracts(new, old.model_copy(update={"version": "9.1.0"}))
    assert rule in _rules(found)
    assert [f for f in found if f.breaking] == []


def test_paths_name_skills_and_values() -> None:
    old, new = _pair("output.enum_value_added")
    [finding] = [f for f in diff_contracts(old, new) if f.rule == "output.enum_value_added"]
    assert finding.path == "/output_schema/properties/state/enum/lost"
    assert finding.contract == "tool:demo.tool"
    old, new = _pair("output.schema_changed")
    [finding] = [f for f in diff_contracts(old, new) if f.rule == "output.schema_changed"]
    assert finding.path == "/skills/demo.ask/output_schema/properties/a/format"


# -- versions -----------------------------------------------------------------------------


def _versions(old_version: str, new_version: str, mutate: Mutation) -> set[str]:
    base = copy.deepcopy(TOOL)
    changed = copy.deepcopy(base)
    mutate(changed)
    base["version"], changed["version"] = old_version, new_version
    return _rules(diff_contracts(tool(base), tool(changed)))


def _remove_error(d: Doc) -> None:
    d["errors"].remove("NOT_FOUND")


def _add_error(d: Doc) -> None:
    d["errors"].append("UNAVAILABLE")


def _describe(d: Doc) -> None:
    d["description"] = "Prose only."


def test_breaking_change_without_major_bump_is_flagged() -> None:
    assert "version.major_bump_missing" in _versions("1.0.0", "1.1.0", _remove_error)
    assert "version.major_bump_missing" not in _versions("1.0.0", "2.0.0", _remove_error)


def test_change_without_any_bump_is_flagged_but_prose_is_free() -> None:
    assert "version.bump_missing" in _versions("1.0.0", "1.0.0", _add_error)
    assert "version.bump_missing" not in _versions("1.0.0", "1.0.1", _add_error)
    assert _versions("1.0.0", "1.0.0", _describe) == {"doc.changed"}


def test_version_up_and_down() -> None:
    assert "version.bumped" in _versions("1.0.0", "1.0.1", _describe)
    assert _versions("1.2.0", "1.1.0", _describe) >= {"version.downgraded"}
    assert "version.bumped" not in _versions("1.2.0", "1.1.0", _describe)
