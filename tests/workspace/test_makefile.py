"""`make unit` runs the suite on parallel workers, then the run_summary tests on their own.

The second pass collects only the files the Makefile lists in SUMMARY_TESTS (collecting the
whole suite again costs tens of seconds under load), so a run_summary test in a file missing
from that list would never run in `make test`. This keeps the list and the markers together.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^\s*@pytest\.mark\.run_summary\b", re.MULTILINE)


def summary_tests_in_makefile() -> set[str]:
    found = re.search(r"^SUMMARY_TESTS := (.+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert found, "the Makefile sets SUMMARY_TESTS"
    return set(found.group(1).split())


def files_with_run_summary_tests() -> set[str]:
    found = set()
    for folder, dirs, files in os.walk(ROOT / "tests"):
        dirs[:] = [d for d in dirs if d != "node_modules"]  # the JS tests' npm packages
        for name in files:
            path = Path(folder) / name
            is_test = name.startswith("test_") and name.endswith(".py")
            if is_test and MARKER.search(path.read_text(encoding="utf-8")):
                found.add(str(path.relative_to(ROOT)))
    return found


def test_summary_tests_lists_every_file_with_a_run_summary_test() -> None:
    assert files_with_run_summary_tests() == summary_tests_in_makefile()
