"""`accord contract-test` with no URL, run from a subfolder of an application: it checks that
application's services (its accord.yaml found from the current folder up, as the data
directory is), and outside any application it asks for URLs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from accord.cli.app_targets import app_targets

# The app's folder is put first on the import path when a service is looked up: a package name
# no other test uses.
PKG = "notes_targets_app"
APP = f"""
name: notes
services:
  - {{name: notes-agent, serve: "{PKG}.services:agent", port: 8891}}
  - {{name: notes-tools, serve: "{PKG}.services:tools", port: 8892}}
contract_test:
  skip: [TOOL-006]
"""
SERVICES = """
from accord.protocol.service import ServiceSpec

agent = ServiceSpec("notes-agent", "a2a", "an agent", build_app=lambda _options: None)
tools = ServiceSpec("notes-tools", "mcp", "a tool server", build_app=lambda _options: None)
"""


def test_the_application_above_is_the_one_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "accord.yaml").write_text(APP)
    deep = tmp_path / PKG / "sub"
    deep.mkdir(parents=True)
    (tmp_path / PKG / "__init__.py").write_text("")
    (tmp_path / PKG / "services.py").write_text(SERVICES)
    monkeypatch.chdir(deep)
    for name in ("NOTES_AGENT", "NOTES_TOOLS"):
        monkeypatch.delenv(f"ACCORD_{name}_URL", raising=False)
    target = app_targets(None)
    assert target.app.name == "notes"
    assert target.skip == ("TOOL-006",)
    assert target.urls == ("http://127.0.0.1:8891", "http://127.0.0.1:8892/mcp")


def test_outside_any_application_it_asks_for_urls(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli.main", "contract-test"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stdout
    assert "give URLs" in done.stderr
    assert "accord.yaml here or above" in done.stderr
