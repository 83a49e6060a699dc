"""Coverage both ways: every kit check names a manifest requirement, and every manifest
requirement the kit does not check is written down as a known gap in docs/contract-test.md."""

from __future__ import annotations

import re

from accord.contracts.manifest import requirement_ids
from accord.kit import TargetKind, checks_for
from tests.kit.conftest import ROOT

DOC = ROOT / "docs" / "contract-test.md"


def kit_ids() -> set[str]:
    return {c.requirement for kind in TargetKind for c in checks_for(kind)}


def test_every_check_is_tagged_with_a_manifest_requirement() -> None:
    assert kit_ids() <= requirement_ids()


def test_check_ids_are_unique_per_kind() -> None:
    for kind in TargetKind:
        ids = [c.id for c in checks_for(kind)]
        assert len(ids) == len(set(ids))


def test_gaps_are_documented() -> None:
    gaps = requirement_ids() - kit_ids()
    print("requirements the kit does not check:", ", ".join(sorted(gaps)))
    text = DOC.read_text()
    section = text.split("## Known gaps", 1)[1]
    documented = set(re.findall(r"\*\*([A-Z]+-\d{3})\*\*", section))
    assert documented == gaps, f"undocumented gaps {gaps - documented}, stale {documented - gaps}"


def test_checks_table_lists_every_check() -> None:
    text = DOC.read_text().split("## Known gaps", 1)[0]
    for kind in TargetKind:
        for check in checks_for(kind):
            assert f"| {check.requirement} | {check.name} |" in text, check.id
