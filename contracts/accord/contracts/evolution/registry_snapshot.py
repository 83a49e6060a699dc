"""The registry as data in the contract folder, so that a diff can read it at any revision.

The error registry (errors.py) and the status mapping (status.py) are Python tables; a diff
against a git revision must not import old code. ``specs/registry.json`` is generated from the
tables (``make docs``, or ``python -m accord.contracts.evolution.registry_snapshot``) and a test
fails when it is stale, like docs/contract.md. Revisions from before it existed are compared
without it, and the report says so.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Final

from accord.contracts.errors import REGISTRY
from accord.contracts.evolution.findings import Finding, pointer
from accord.contracts.export import status_document

REGISTRY_CONTRACT: Final = "registry"
STATUS_MAPPING_KEYS: Final = (
    "statuses",
    "terminal",
    "waiting_reasons",
    "transitions",
    "to_a2a",
    "from_a2a",
    "metadata_fields",  # the fields of the status metadata (recorded since mesh contract 2.0)
)
WIRE_FIELDS: Final = ("jsonrpc_code", "rest_status", "rest_reason", "http_status")


def snapshot() -> dict[str, Any]:
    status = status_document()
    return {
        "errors": {
            code.value: {"retry": spec.retry.value, **{k: getattr(spec, k) for k in WIRE_FIELDS}}
            for code, spec in REGISTRY.items()
        },
        "status": {key: status[key] for key in STATUS_MAPPING_KEYS},
    }


def snapshot_text() -> str:
    return json.dumps(snapshot(), indent=2, ensure_ascii=False) + "\n"


def diff_registry(old: dict[str, Any], new: dict[str, Any]) -> list[Finding]:
    def f(rule: str, path: tuple[object, ...], before: Any, after: Any) -> Finding:
        return Finding(
            contract=REGISTRY_CONTRACT, rule=rule, path=pointer(*path), old=before, new=after
        )

    found: list[Finding] = []
    before: dict[str, Any] = old.get("errors", {})
    after: dict[str, Any] = new.get("errors", {})
    for code in sorted(before.keys() - after.keys()):
        found.append(f("registry.error_removed", ("errors", code), code, None))
    for code in sorted(after.keys() - before.keys()):
        found.append(f("registry.error_added", ("errors", code), None, code))
    for code in sorted(before.keys() & after.keys()):
        if before[code].get("retry") != after[code].get("retry"):
            found.append(
                f(
                    "registry.retry_changed",
                    ("errors", code, "retry"),
                    before[code].get("retry"),
                    after[code].get("retry"),
                )
            )
        for key in WIRE_FIELDS:
            if before[code].get(key) != after[code].get(key):
                found.append(
                    f(
                        "registry.wire_changed",
                        ("errors", code, key),
                        before[code].get(key),
                        after[code].get(key),
                    )
                )
    old_status, new_status = old.get("status", {}), new.get("status", {})
    for key in STATUS_MAPPING_KEYS:
        if old_status.get(key) != new_status.get(key):
            found.append(
                f(
                    "registry.status_mapping_changed",
                    ("status", key),
                    old_status.get(key),
                    new_status.get(key),
                )
            )
    return found


if __name__ == "__main__":
    sys.stdout.write(snapshot_text())
