"""The pytest plugin: inert by default, one test case per check with --accord-target."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kit.conftest import run_module

SUITE = """
from accord.kit.pytest_plugin import assert_contract


def test_contract(accord_check):
    assert_contract(accord_check)
"""


def run_pytest(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (directory / "test_team_contract.py").write_text(SUITE)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(directory),
            "-o",
            "addopts=",
            str(directory),
            *args,
        ],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
    )


TOKEN = ("--accord-token", "tenant-a")  # the broken server's service token


@pytest.fixture(scope="module")
def tools_url(kit_logs: Path) -> Iterator[str]:
    with run_module("tests.kit.broken_tools", "not-idempotent", kit_logs) as url:
        yield url


def test_plugin_is_inert_without_a_target(tmp_path: Path) -> None:
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout


def test_one_case_per_check_failing_where_the_contract_breaks(
    tmp_path: Path, tools_url: str
) -> None:
    done = run_pytest(tmp_path, "--accord-target", tools_url, *TOKEN, "-rf")
    assert done.returncode == 1, done.stdout
    assert "2 failed" in done.stdout
    assert "TOOL-006" in done.stdout
    assert "passed" in done.stdout


def test_skip_option_turns_failures_into_skips(tmp_path: Path, tools_url: str) -> None:
    done = run_pytest(tmp_path, "--accord-target", tools_url, *TOKEN, "--accord-skip", "TOOL-006")
    assert done.returncode == 0, done.stdout
