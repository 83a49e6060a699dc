"""The command a printed hint names (`try: accord refund ...`): runnable as printed (issue #36:
with the venv not active, a bare `accord` is "command not found")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from accord.cli.output import accord_command


def _program(folder: Path) -> Path:
    folder.mkdir(parents=True)
    program = folder / "accord"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    return program


def test_accord_on_path_is_named_bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = _program(tmp_path / "venv" / "bin")
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert accord_command(str(program)) == "accord"


def test_accord_not_on_path_is_named_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = _program(tmp_path / ".venv" / "bin")
    other = _program(tmp_path / "elsewhere")  # another accord on PATH is not this one
    monkeypatch.setenv("PATH", str(other.parent))
    monkeypatch.chdir(tmp_path)
    assert accord_command(str(program)) == ".venv/bin/accord"
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert accord_command(str(program)) == str(program.resolve())


def test_a_module_run_names_accord(tmp_path: Path) -> None:
    assert accord_command(str(tmp_path / "main.py")) == "accord"
