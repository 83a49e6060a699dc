"""accord.contracts installs alone: no protocol SDK comes with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import accord.contracts

ROOT = Path(__file__).resolve().parents[2]


def test_public_api_is_sorted_and_importable() -> None:
    names = accord.contracts.__all__

    # isort order, as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions.
    def kind(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert names == sorted(names, key=kind)
    for name in names:
        assert hasattr(accord.contracts, name), name


def _uv() -> str | None:
    return shutil.which("uv") or (
        str(ROOT / ".tools/bin/uv") if (ROOT / ".tools/bin/uv").exists() else None
    )


def test_contracts_install_alone_without_protocol_sdks(tmp_path: Path) -> None:
    uv = _uv()
    if uv is None:
        pytest.skip("uv not available (make setup installs it)")
    venv = tmp_path / "venv"
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    # make exports these for the workspace; here they would point uv at the wrong interpreter.
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    env.pop("UV_PYTHON", None)
    subprocess.run(
        [uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, env=env
    )
    subprocess.run(
        [uv, "pip", "install", "--quiet", str(ROOT / "contracts")],
        check=True,
        env=env,
        cwd=tmp_path,
    )
    py = venv / "bin" / "python"
    listed = subprocess.run(
        [uv, "pip", "list", "--format", "freeze"],
        check=True,
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.lower()
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert "accord-contracts" in installed
    assert not installed & {"a2a-sdk", "mcp", "httpx", "starlette", "uvicorn", "sqlalchemy"}
    out = subprocess.run(
        [str(py), "-c", "import accord.contracts as c; print(len(c.REGISTRY))"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert int(out.stdout) == len(accord.contracts.REGISTRY)
