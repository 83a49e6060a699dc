"""The registry snapshot is fresh, and each registry rule fires on its change."""

from __future__ import annotations

import copy
from pathlib import Path

from accord.contracts.evolution.registry_snapshot import diff_registry, snapshot, snapshot_text
from accord.contracts.evolution.rules import refresh_page
from accord.contracts.evolution.sources import REGISTRY_SNAPSHOT, SPECS_IN_REPO

ROOT = Path(__file__).resolve().parents[3]


def test_registry_snapshot_is_generated_and_fresh() -> None:
    on_disk = (ROOT / SPECS_IN_REPO / REGISTRY_SNAPSHOT).read_text(encoding="utf-8")
    assert on_disk == snapshot_text(), "specs/registry.json is stale: run `make docs`"


def test_same_registry_has_no_findings() -> None:
    assert diff_registry(snapshot(), snapshot()) == []


def test_each_registry_rule() -> None:
    old = snapshot()
    removed = copy.deepcopy(old)
    del removed["errors"]["OUT_OF_STOCK"]
    assert [(f.rule, f.path) for f in diff_registry(old, removed)] == [
        ("registry.error_removed", "/errors/OUT_OF_STOCK")
    ]
    assert [f.rule for f in diff_registry(removed, old)] == ["registry.error_added"]
    retry = copy.deepcopy(old)
    retry["errors"]["UNAVAILABLE"]["retry"] = "stop"
    [finding] = diff_registry(old, retry)
    assert (finding.rule, finding.path, finding.old, finding.new, finding.breaking) == (
        "registry.retry_changed",
        "/errors/UNAVAILABLE/retry",
        "retry",
        "stop",
        True,
    )
    wire = copy.deepcopy(old)
    wire["errors"]["NOT_FOUND"]["http_status"] = 410
    assert [f.rule for f in diff_registry(old, wire)] == ["registry.wire_changed"]
    status = copy.deepcopy(old)
    status["status"]["from_a2a"]["TASK_STATE_REJECTED"] = {"status": "completed"}
    assert [(f.rule, f.path) for f in diff_registry(old, status)] == [
        ("registry.status_mapping_changed", "/status/from_a2a")
    ]


def test_docs_list_every_rule_as_the_table_says() -> None:
    page = (ROOT / "docs" / "contract-evolution.md").read_text(encoding="utf-8")
    assert refresh_page(page) == page, "docs/contract-evolution.md is stale: run `make docs`"
