"""Compare two versions of one agent or tool contract: every change, with its rule.

The version rules come last: they judge the version bump against the other findings (a breaking
change needs a new major version; any change but prose needs some bump).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from accord.contracts.agents import AgentContract, Skill
from accord.contracts.evolution.findings import Finding, pointer
from accord.contracts.evolution.schema_diff import diff_schema
from accord.contracts.tool_access import ToolAccess
from accord.contracts.tools import ToolContract
from accord.contracts.versions import semver

Contract = AgentContract | ToolContract


def contract_id(contract: Contract) -> str:
    kind = "agent" if isinstance(contract, AgentContract) else "tool"
    return f"{kind}:{contract.name}"


def diff_contracts(old: Contract, new: Contract) -> list[Finding]:
    """The findings of one contract's change from ``old`` to ``new`` (same kind and name)."""
    cid = contract_id(new)
    found: list[Finding] = []
    if isinstance(old, AgentContract) and isinstance(new, AgentContract):
        found += _agent(cid, old, new)
    elif isinstance(old, ToolContract) and isinstance(new, ToolContract):
        found += _tool(cid, old, new)
    else:  # pragma: no cover - callers pair contracts by kind
        raise TypeError("contracts of different kinds")
    found += _set_changes(
        cid, "also_serves", old.also_serves, new.also_serves, "served.added", "served.dropped"
    )
    return found + _version(cid, old.version, new.version, found)


def _f(cid: str, rule: str, path: tuple[object, ...], old: Any = None, new: Any = None) -> Finding:
    return Finding(contract=cid, rule=rule, path=pointer(*path), old=old, new=new)


def _docs(
    cid: str, old: Any, new: Any, fields: Iterable[str], base: tuple[object, ...]
) -> list[Finding]:
    return [
        _f(cid, "doc.changed", (*base, name), getattr(old, name), getattr(new, name))
        for name in fields
        if getattr(old, name) != getattr(new, name)
    ]


def _set_changes(
    cid: str, field: str, old: Sequence[str], new: Sequence[str], added: str, removed: str
) -> list[Finding]:
    base = tuple(field.split("/"))
    out = [_f(cid, removed, (*base, v), v, None) for v in sorted(set(old) - set(new))]
    return out + [_f(cid, added, (*base, v), None, v) for v in sorted(set(new) - set(old))]


def _agent(cid: str, old: AgentContract, new: AgentContract) -> list[Finding]:
    found = _docs(cid, old, new, ("description",), ())
    if old.default_port != new.default_port:
        found.append(_f(cid, "port.changed", ("default_port",), old.default_port, new.default_port))
    if old.streaming != new.streaming:
        rule = "streaming.added" if new.streaming else "streaming.removed"
        found.append(_f(cid, rule, ("streaming",), old.streaming, new.streaming))
    for field in ("input_modes", "output_modes"):
        found += _set_changes(
            cid, field, getattr(old, field), getattr(new, field), "mode.added", "mode.removed"
        )
    found += _set_changes(
        cid,
        "waiting_reasons",
        [r.value for r in old.waiting_reasons],
        [r.value for r in new.waiting_reasons],
        "waiting.added",
        "waiting.removed",
    )
    found += _errors(cid, old.errors, new.errors)
    before = {s.id: s for s in old.skills}
    after = {s.id: s for s in new.skills}
    for sid in sorted(before.keys() - after.keys()):
        found.append(_f(cid, "skill.removed", ("skills", sid), sid, None))
    for sid in sorted(after.keys() - before.keys()):
        found.append(_f(cid, "skill.added", ("skills", sid), None, sid))
    for sid in sorted(before.keys() & after.keys()):
        found += _skill(cid, before[sid], after[sid])
    return found


def _skill(cid: str, old: Skill, new: Skill) -> list[Finding]:
    base = ("skills", old.id)
    found = _docs(cid, old, new, ("name", "description", "tags", "examples"), base)
    found += diff_schema(cid, "input", old.input_schema, new.input_schema, (*base, "input_schema"))
    return found + diff_schema(
        cid, "output", old.output_schema, new.output_schema, (*base, "output_schema")
    )


def _errors(cid: str, old: Sequence[str], new: Sequence[str]) -> list[Finding]:
    return _set_changes(
        cid, "errors", [str(e) for e in old], [str(e) for e in new], "error.added", "error.removed"
    )


def _tool(cid: str, old: ToolContract, new: ToolContract) -> list[Finding]:
    found = _docs(cid, old, new, ("title", "description"), ())
    if old.side_effect != new.side_effect:
        found.append(
            _f(cid, "side_effect.changed", ("side_effect",), old.side_effect, new.side_effect)
        )
    if old.idempotency_key != new.idempotency_key:
        found.append(
            _f(
                cid,
                "idempotency.changed",
                ("idempotency_key",),
                old.idempotency_key,
                new.idempotency_key,
            )
        )
    found += _errors(cid, old.errors, new.errors)
    found += _access(cid, old.access, new.access)
    found += diff_schema(cid, "input", old.input_schema, new.input_schema, ("input_schema",))
    return found + diff_schema(
        cid, "output", old.output_schema, new.output_schema, ("output_schema",)
    )


def _access(cid: str, old: ToolAccess | None, new: ToolAccess | None) -> list[Finding]:
    if old == new:
        return []
    if old is None or new is None:
        # No access section means any verified principal: adding one narrows, dropping widens.
        rule = "access.narrowed" if old is None else "access.widened"
        return [_f(cid, rule, ("access",), _dump(old), _dump(new))]
    found: list[Finding] = []
    for field in ("customer_field", "approver_field"):
        before, after = getattr(old, field), getattr(new, field)
        if before != after:
            found.append(_f(cid, "access.changed", ("access", field), before, after))
    found += _set_changes(
        cid, "access/allow", _grants(old), _grants(new), "access.widened", "access.narrowed"
    )
    return found


def _dump(access: ToolAccess | None) -> dict[str, Any] | None:
    return None if access is None else access.model_dump(mode="json", exclude_none=True)


def _grants(access: ToolAccess) -> list[str]:
    """Allow entries as "role" or "role:scope", so that a set difference names each one."""
    return [r.role.value if r.scope is None else f"{r.role.value}:{r.scope}" for r in access.allow]


def _version(cid: str, old: str, new: str, found: list[Finding]) -> list[Finding]:
    before, after = semver(old), semver(new)
    if after < before:
        return [_f(cid, "version.downgraded", ("version",), old, new)]
    out = [_f(cid, "version.bumped", ("version",), old, new)] if after > before else []
    if any(f.breaking for f in found) and after[0] <= before[0]:
        out.append(_f(cid, "version.major_bump_missing", ("version",), old, new))
    elif after == before and any(f.rule != "doc.changed" for f in found):
        out.append(_f(cid, "version.bump_missing", ("version",), old, new))
    return out
