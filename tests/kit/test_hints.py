"""Every requirement says how to fix a breach and links to its section of docs/porting.md, and a
failing row shows both in the table, in JUnit XML and in the pytest plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from accord.contracts.manifest import PORTING_DOC, load_manifest
from accord.kit import CheckResult, Report, Verdict, junit_xml, render_table
from accord.kit.pytest_plugin import assert_contract

ROOT = Path(__file__).resolve().parents[2]
FAILED = CheckResult(
    "TOOL-005",
    "listed input and output schemas equal the contract's",
    "http://127.0.0.1:1/mcp",
    Verdict.FAIL,
    detail="orders.lookup: inputSchema differs from the contract at /required",
)


def _slug(heading: str) -> str:
    """The anchor GitHub (and most Markdown renderers) give a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _sections() -> dict[str, str]:
    """docs/porting.md's second-level sections by anchor: their text."""
    doc = (ROOT / PORTING_DOC).read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", doc, flags=re.MULTILINE)
    return {_slug(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def test_every_requirement_has_a_hint_and_a_porting_section_that_names_it() -> None:
    sections = _sections()
    for req in load_manifest().requirements:
        assert req.hint.strip(), req.id
        assert "\n" not in req.hint, f"{req.id}: a hint is one line"
        assert req.link == f"{PORTING_DOC}#{req.porting}"
        assert req.porting in sections, f"{req.id}: no section #{req.porting} in {PORTING_DOC}"
        assert req.id in sections[req.porting], f"{req.id}: its section does not name it"


def test_every_porting_section_is_the_home_of_some_requirement() -> None:
    homes = {req.porting for req in load_manifest().requirements}
    assert set(_sections()) - homes <= {"checking-your-implementation"}


def test_a_failing_row_shows_the_hint_and_the_link_in_the_table() -> None:
    console = Console(record=True, width=400)
    render_table(Report([FAILED]), console)
    text = console.export_text()
    assert FAILED.hint[:60] in text
    assert f"{PORTING_DOC}#mcp-tool-contracts" in text


def test_a_failing_row_shows_the_hint_and_the_link_in_junit() -> None:
    failure = junit_xml([FAILED]).getroot().find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.text is not None
    assert f"fix: {FAILED.hint}" in failure.text
    assert f"see: {FAILED.link}" in failure.text


def test_a_failing_row_shows_the_hint_and_the_link_in_the_pytest_plugin() -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        assert_contract(FAILED)
    assert FAILED.hint in str(failed.value)
    assert FAILED.link in str(failed.value)


def test_a_passing_or_skipped_row_shows_no_hint() -> None:
    console = Console(record=True, width=400)
    passed = CheckResult("TOOL-005", "every contracted tool is listed", "u", Verdict.PASS)
    skipped = CheckResult("ERR-005", "x", "u", Verdict.SKIP, detail="no tool error was observed")
    render_table(Report([passed, skipped]), console)
    text = console.export_text()
    assert "fix:" not in text
    assert PORTING_DOC not in text
