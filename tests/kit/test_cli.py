"""`accord contract-test` as a user runs it: a subprocess, exit codes, JUnit XML, --skip."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kit.conftest import ROOT, run_module
from tests.support import forked

TOOLS = "tests.kit.broken_tools"
TOKEN = ("--token", "tenant-a")  # the broken server's service token (tool servers need one)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = forked.bare_env(COLUMNS="200")
    return forked.run(["contract-test", *args], env, timeout=240, cwd=ROOT)


@pytest.fixture(scope="module")
def broken_url(kit_logs: Path) -> Iterator[str]:
    with run_module(TOOLS, "not-idempotent", kit_logs) as url:
        yield url


def test_violation_exits_1_and_junit_names_the_requirement(broken_url: str, tmp_path: Path) -> None:
    junit = tmp_path / "kit.xml"
    done = cli(broken_url, *TOKEN, "--junit", str(junit))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "TOOL-006" in done.stdout
    root = ET.parse(junit).getroot()
    cases = root.findall("./testsuite/testcase")
    assert cases
    assert {c.get("classname") for c in cases} == {broken_url}
    failed = [c for c in cases if c.find("failure") is not None]
    assert failed
    assert all(c.get("name", "").startswith("TOOL-006 ") for c in failed)
    message = failed[0].find("failure").get("message", "")  # type: ignore[union-attr]
    assert message.startswith("TOOL-006:")
    assert any(c.find("skipped") is None and c.find("failure") is None for c in cases)


def test_skipping_the_broken_requirement_exits_0(broken_url: str, tmp_path: Path) -> None:
    junit = tmp_path / "kit.xml"
    done = cli(broken_url, *TOKEN, "--skip", "TOOL-006", "--junit", str(junit))
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [
        c
        for c in ET.parse(junit).getroot().iter("testcase")
        if c.get("name", "").startswith("TOOL-006 ")
    ]
    assert skipped
    assert all(c.find("skipped") is not None for c in skipped)


def test_unknown_requirement_in_skip_is_a_usage_error(broken_url: str) -> None:
    done = cli(broken_url, "--skip", "NOPE-999")
    assert done.returncode == 2
    assert "NOPE-999" in done.stdout + done.stderr


def test_nothing_listening_is_a_violation() -> None:
    done = cli("http://127.0.0.1:9", "--timeout", "2")
    assert done.returncode == 1
    assert "AGENT-002" in done.stdout
