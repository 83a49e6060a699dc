"""Compare two JSON Schemas of one input or output, keyword by keyword.

Inputs and outputs are judged in opposite directions (see rules.py): a change that narrows what
the schema accepts is ``*.limit_narrowed`` whichever side it is on, and the rules table says
whether it breaks there. Keywords this module does not reason about (``$ref``, ``anyOf``,
``const``...) are compared as values: any difference is ``*.schema_changed``, which breaks, so
that nothing changes unseen.
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from accord.contracts.evolution.findings import Finding, pointer

Side = Literal["input", "output"]

ANNOTATIONS: Final = frozenset(
    {"description", "title", "examples", "deprecated", "default", "$comment", "readOnly"}
)
UPPER_BOUNDS: Final = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
LOWER_BOUNDS: Final = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
HANDLED: Final = frozenset(
    {"type", "enum", "pattern", "required", "properties", "additionalProperties", "items", "$defs"}
    | set(UPPER_BOUNDS)
    | set(LOWER_BOUNDS)
)


class SchemaDiff:
    """Collects the findings of one schema pair; ``path`` tokens lead to the schema's root."""

    def __init__(self, contract: str, side: Side) -> None:
        self.contract = contract
        self.side = side
        self.findings: list[Finding] = []

    def add(self, change: str, path: tuple[object, ...], old: Any = None, new: Any = None) -> None:
        self.findings.append(
            Finding(
                contract=self.contract,
                rule=f"{self.side}.{change}",
                path=pointer(*path),
                old=old,
                new=new,
            )
        )

    def compare(self, old: dict[str, Any], new: dict[str, Any], path: tuple[object, ...]) -> None:
        self._types(old.get("type"), new.get("type"), path)
        self._enum(old.get("enum"), new.get("enum"), path)
        self._pattern(old.get("pattern"), new.get("pattern"), path)
        self._bounds(old, new, path)
        self._required(old.get("required", []), new.get("required", []), path)
        self._closed(old, new, path)
        self._properties(old, new, path)
        for key in ("items", "additionalProperties"):
            if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
                self.compare(old[key], new[key], (*path, key))
        old_defs, new_defs = old.get("$defs", {}), new.get("$defs", {})
        for name in sorted(set(old_defs) & set(new_defs)):
            self.compare(old_defs[name], new_defs[name], (*path, "$defs", name))
        for key in sorted((set(old) | set(new)) - HANDLED - ANNOTATIONS):
            if old.get(key) != new.get(key):
                self.add("schema_changed", (*path, key), old.get(key), new.get(key))
        for key in sorted(ANNOTATIONS):
            if old.get(key) != new.get(key):
                self.findings.append(
                    Finding(
                        contract=self.contract,
                        rule="doc.changed",
                        path=pointer(*path, key),
                        old=old.get(key),
                        new=new.get(key),
                    )
                )

    def _types(self, old: Any, new: Any, path: tuple[object, ...]) -> None:
        before, after = _type_set(old), _type_set(new)
        if before == after:
            return
        path = (*path, "type")
        narrowed = after is not None and (before is None or not before <= after)
        widened = before is not None and (after is None or not after <= before)
        # Both at once (string -> integer): report the one that breaks on this side.
        if narrowed and (self.side == "input" or not widened):
            self.add("type_narrowed", path, old, new)
        if widened and (self.side == "output" or not narrowed):
            self.add("type_widened", path, old, new)

    def _enum(self, old: Any, new: Any, path: tuple[object, ...]) -> None:
        if old == new:
            return
        if old is None:
            self.add("limit_narrowed", (*path, "enum"), None, new)
            return
        if new is None:
            self.add("limit_widened", (*path, "enum"), old, None)
            return
        before, after = _values(old), _values(new)
        for key in sorted(before.keys() - after.keys()):
            self.add("enum_value_removed", (*path, "enum", key), before[key], None)
        for key in sorted(after.keys() - before.keys()):
            self.add("enum_value_added", (*path, "enum", key), None, after[key])

    def _pattern(self, old: Any, new: Any, path: tuple[object, ...]) -> None:
        if old == new:
            return
        # Whether one regular expression accepts less than another is not decidable here: a
        # changed pattern is taken to accept different values.
        if old is None:
            change = "pattern_changed" if self.side == "input" else "pattern_added"
        elif new is None:
            change = "pattern_removed" if self.side == "input" else "pattern_changed"
        else:
            change = "pattern_changed"
        self.add(change, (*path, "pattern"), old, new)

    def _bounds(self, old: dict[str, Any], new: dict[str, Any], path: tuple[object, ...]) -> None:
        for key in (*UPPER_BOUNDS, *LOWER_BOUNDS):
            before, after = old.get(key), new.get(key)
            if before == after:
                continue
            upper = key in UPPER_BOUNDS
            if before is None or after is None:
                tighter = before is None
            else:
                tighter = after < before if upper else after > before
            self.add("limit_narrowed" if tighter else "limit_widened", (*path, key), before, after)

    def _required(self, old: list[str], new: list[str], path: tuple[object, ...]) -> None:
        for name in sorted(set(new) - set(old)):
            self.add("required_added", (*path, "required", name), None, name)
        for name in sorted(set(old) - set(new)):
            self.add("required_removed", (*path, "required", name), name, None)

    def _closed(self, old: dict[str, Any], new: dict[str, Any], path: tuple[object, ...]) -> None:
        before, after = _is_closed(old), _is_closed(new)
        if before != after:
            self.add("closed" if after else "opened", (*path, "additionalProperties"))

    def _properties(
        self, old: dict[str, Any], new: dict[str, Any], path: tuple[object, ...]
    ) -> None:
        before: dict[str, Any] = old.get("properties", {})
        after: dict[str, Any] = new.get("properties", {})
        removed = sorted(before.keys() - after.keys())
        added = sorted(after.keys() - before.keys())
        for name in removed:
            # A field that moved with its schema unchanged is a rename, reported once.
            twin = next((a for a in added if after[a] == before[name]), None)
            if twin is not None:
                added.remove(twin)
                self.add("property_renamed", (*path, "properties", name), name, twin)
            else:
                self.add("property_removed", (*path, "properties", name), name, None)
        for name in added:
            change = (
                "property_added_closed"
                if self.side == "output" and _is_closed(old)
                else "property_added"
            )
            self.add(change, (*path, "properties", name), None, name)
        for name in sorted(before.keys() & after.keys()):
            if isinstance(before[name], dict) and isinstance(after[name], dict):
                self.compare(before[name], after[name], (*path, "properties", name))


def _type_set(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset([value] if isinstance(value, str) else value)


def _values(enum: list[Any]) -> dict[str, Any]:
    """Enum values by a printable key (strings as themselves, others as JSON)."""
    return {v if isinstance(v, str) else json.dumps(v, sort_keys=True): v for v in enum}


def _is_closed(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties") is False


def diff_schema(
    contract: str, side: Side, old: dict[str, Any], new: dict[str, Any], path: tuple[object, ...]
) -> list[Finding]:
    """Every change between two schemas of one side, as findings."""
    diff = SchemaDiff(contract, side)
    diff.compare(old, new, path)
    return diff.findings
