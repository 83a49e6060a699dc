"""The framework names no concept of the application built on it (issue #31).

A team building their own mesh installs the framework's distributions; none of them may speak
of the refund assistant's refunds, orders, shops or services. Checked where the split is done:
the contract test kit (``accord-kit``), whose probes come from the application, the workflow
runtime (``accord-runtime``), the `accord` command (``accord-cli``, an application's commands
plugged in through entry points) and the A2A/MCP plumbing, auth, storage, push and telemetry
(``accord-protocol``: an application's settings, trust table and tools file are its own).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "protocol" / "accord" / "protocol"
# Each framework distribution.
FRAMEWORK = {
    "accord-contracts": ROOT / "contracts" / "accord" / "contracts",
    "accord-kit": ROOT / "protocol" / "kit",
    "accord-runtime": ROOT / "protocol" / "runtime",
    "accord-cli": ROOT / "protocol" / "cli",
    "accord-protocol": PROTOCOL,
}

# Refund words, the refund app's services and tools, and its demo ids.
APP_WORDS = re.compile(
    r"refund|\bcommerce\b|\bpayments\b|\bledger\b|\borchestrator\b|policy-check|risk-check"
    r"|\borders?\.[a-z_]+|\border_id\b|\bcustomers?\.history\b|\b[OC]-\d{2,4}\b",
    re.IGNORECASE,
)


def _mentions(part: Path) -> list[str]:
    """Every line of ``part`` (a folder, or one file) that names an application concept."""
    found = []
    for path in [part] if part.is_file() else sorted(part.rglob("*")):
        if path.suffix not in {
            ".py",
            ".toml",
            ".md",
            ".yaml",
            ".json",
            ".tmpl",
        } or "__pycache__" in str(path):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if APP_WORDS.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize("distribution", FRAMEWORK)
def test_a_framework_distribution_names_no_application_concept(distribution: str) -> None:
    assert _mentions(FRAMEWORK[distribution]) == []


def test_the_words_are_found_where_they_are() -> None:
    """The scan itself works: the application's own probes are full of them, in a folder and
    in a single file; and every part listed is there to scan."""
    assert _mentions(ROOT / "agents" / "accord" / "agents" / "refund")
    assert _mentions(ROOT / "agents" / "accord" / "agents" / "refund" / "tools.yaml")
    assert all(part.exists() for part in FRAMEWORK.values())
