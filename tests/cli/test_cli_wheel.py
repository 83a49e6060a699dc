"""The `accord` command as another team installs it: accord-cli's wheel with the framework wheels
it needs (accord-kit, accord-protocol, accord-contracts), built from this tree, in a clean venv
with no application in it. There `accord --help` lists the framework's commands and no refund
command, and `accord new`'s application is served by `accord up` and passed by `accord
contract-test` (issue #31: the command line is framework).

Offline, as tests/kit/test_kit_wheel.py: the third-party packages come from uv's cache (the
lock's versions, exported as pylock.toml), the four wheels from ``--find-links``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from accord.cli.main import COMMANDS
from tests.support.new_app import NAME, accord, env_for, serve_and_check
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".tools" / "bin" / "uv"  # made by `make setup`, the uv that built .venv
WHEELS = ("accord-cli", "accord-kit", "accord-protocol", "accord-contracts")
APPLICATION_COMMANDS = ("refund", "chat", "approve", "tasks", "demo", "stats", "console")

pytestmark = pytest.mark.timeout(420)


def _uv(*args: str | Path) -> None:
    done = subprocess.run(
        [str(UV), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"uv {args}: {done.stdout}{done.stderr}"


@pytest.fixture(scope="module")
def framework_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the framework's four wheels and their third-party packages, nothing else."""
    tmp = tmp_path_factory.mktemp("cli-wheel")
    wheels, lock, venv = tmp / "wheels", tmp / "pylock.toml", tmp / "venv"
    for package in WHEELS:
        _uv("build", "--offline", "--quiet", "--wheel", "--package", package, "-o", wheels)
    _uv(
        *("export", "--frozen", "--quiet", "--package", "accord-cli", "--no-emit-workspace"),
        *("--no-dev", "--format", "pylock.toml", "-o", lock),
    )
    _uv("venv", "--quiet", "--python", os.path.realpath(sys.executable), venv)
    python = venv / "bin" / "python"
    install = ("pip", "install", "--offline", "--quiet", "--python", python)
    _uv(*install, "-r", lock)
    _uv(*install, "--find-links", wheels, "accord-cli")
    return venv / "bin"


def test_the_framework_s_accord_has_its_commands_and_no_application_s(
    framework_bin: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path, framework_bin)
    shown = accord(["--help"], tmp_path, env)
    assert shown.returncode == 0, shown.stderr
    listed = {line.split()[0] for line in shown.stdout.split("Commands:")[1].splitlines() if line}
    assert listed == {entry.name for entry in COMMANDS}
    assert not listed & set(APPLICATION_COMMANDS)
    unknown = accord(["refund", "hello"], tmp_path, env)
    assert unknown.returncode == 2
    assert "No such command 'refund'" in unknown.stderr
    version = accord(["--version"], tmp_path, env)
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("accord ")
    # No app file and no application installed: a usage error that says what to give.
    up = accord(["up"], tmp_path, env)
    assert up.returncode == 2, up.stdout
    assert "accord.yaml" in up.stderr


def test_a_new_app_runs_on_the_framework_s_wheels_alone(
    framework_bin: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path, framework_bin)
    agent_port, tool_port = free_port(), free_port()
    new = accord(
        ["new", NAME, "--agent-port", str(agent_port), "--tool-port", str(tool_port)],
        tmp_path,
        env,
    )
    assert new.returncode == 0, new.stderr
    serve_and_check(tmp_path / NAME, env, agent_port, tool_port)
