"""docs/conformance.md stays honest: every test it names exists, and every row of the A2A and
MCP sections' tables names a test, says why it does not apply, or says it is a gap."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "conformance.md"
NAMED = re.compile(r"(tests/[\w/]+\.py)(?:::(\w+))?")
SECTIONS = (
    "### Section 3",
    "### Section 9",
    "### Section 11",
    "### Errors",
    "### What A2A 1.0.1 changed",
    "### MCP: base protocol and statelessness",
    "### MCP: Streamable HTTP transport",
    "### MCP: tools",
    "### MCP: Accord's MCP client",
    "### MCP: capabilities the tool servers do not declare",
)
# A table's header row: no requirement.
HEADERS = ("| A2A 1.0 |", "| A2A 1.0.1 |", "| MCP 2026-07-28 |")


def _rows(section: str) -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8").split(section, 1)[1].split("\n#", 1)[0]
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith(HEADERS)
    ]


def test_every_named_test_exists() -> None:
    missing = []
    for path, name in NAMED.findall(DOC.read_text(encoding="utf-8")):
        source = ROOT / path
        if not source.is_file():
            missing.append(path)
        elif name and not re.search(rf"^(async )?def {name}\(", source.read_text(), re.M):
            missing.append(f"{path}::{name}")
    assert not missing, "docs/conformance.md names tests that do not exist: " + ", ".join(missing)


def test_every_requirement_row_is_answered() -> None:
    unanswered = []
    for section in SECTIONS:
        rows = _rows(section)
        assert rows, f"{section} lists no requirement"
        for clause, requirement, answer in rows:
            answered = NAMED.search(answer) or "not applicable" in answer or "**gap**" in answer
            if not answered and "below" not in requirement:
                unanswered.append(f"{clause}: {requirement}")
    assert not unanswered, unanswered
