"""What the browser tests share: the system Chromium (never a downloaded one), the console as a
real process next to a real mesh, and where screenshots go."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from tests.mesh.support import Mesh, running_mesh
from tests.support.processes import free_port, wait_healthy

ROOT: Final = Path(__file__).resolve().parents[2]
ARTIFACTS: Final = ROOT / ".accord" / "test-artifacts" / "console"
CHROMIUM_NAMES: Final = ("chromium", "chromium-browser")


def chromium_path() -> str:
    """Debian's chromium; skip without it locally, fail on CI (.ci/run installs it)."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium must be installed on CI (.ci/run: apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install -y chromium)")


@dataclass
class ConsoleMesh:
    mesh: Mesh
    console_url: str


@contextmanager
def running_console(base: Path) -> Iterator[ConsoleMesh]:
    """The five services and `accord console`, the orchestrator allowing the console's origin."""
    console_url = f"http://127.0.0.1:{free_port()}"
    allow = {"ACCORD_CONSOLE_URL": console_url}
    with running_mesh(base, orchestrator_env=allow) as mesh:
        log_path = mesh.log_dir / "console.log"
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "accord.cli.main", "console"],
                env={**os.environ, **mesh.env, **allow},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            wait_healthy(console_url, proc, deadline_s=30.0)
            yield ConsoleMesh(mesh, console_url)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
