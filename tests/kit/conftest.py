"""Fixtures of the kit's own tests: deliberately broken servers as real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from tests.support.processes import free_port, wait_healthy

ROOT = Path(__file__).resolve().parents[2]

RunModule = Callable[[str, str], AbstractContextManager[str]]


@contextmanager
def run_module(module: str, mode: str, log_dir: Path) -> Iterator[str]:
    """``python -m MODULE MODE PORT`` until the block ends; yields its base URL."""
    port = free_port()
    log = log_dir / f"{module.rsplit('.', 1)[-1]}-{mode}-{port}.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, mode, str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(url, proc, deadline_s=60.0)
        except (RuntimeError, TimeoutError):
            raise RuntimeError(
                f"{module} {mode} did not start; log:\n{log.read_text()[-3000:]}"
            ) from None
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@pytest.fixture(scope="session")
def kit_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kit-logs")
