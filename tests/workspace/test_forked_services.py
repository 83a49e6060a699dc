"""Services forked from the pre-imported parent (tests/support/zygote.py) behave as
``python -m accord.cli.main`` does: the exit status, the signals, the environment,
the working directory and the log are the child's own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import jwt
import pytest

from tests.support import forked
from tests.support.ports import free_port
from tests.support.processes import run_service

ENV_BASE = {"PATH": "/usr/bin:/bin", "ACCORD_JWT_SECRET": "x" * 40}


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    python = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
    return {**python, **ENV_BASE, "ACCORD_DATA_DIR": str(tmp_path), **extra}


def test_a_fork_exits_as_the_command_would(tmp_path: Path) -> None:
    log = tmp_path / "help.log"
    process = forked.start(["--help"], _env(tmp_path), log)
    assert isinstance(process, forked.ForkedProcess)
    assert process.wait(timeout=60) == 0
    assert "serve" in log.read_text()  # the command's own output, in its log
    bad = forked.start(["serve", "no-such-service"], _env(tmp_path), tmp_path / "bad.log")
    assert bad.wait(timeout=60) == 2  # Click's usage error
    port = free_port()
    serving = forked.start(
        ["serve", "risk", "--port", str(port)], _env(tmp_path), tmp_path / "r.log"
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            serving.wait(0)  # a service runs until it is stopped
    finally:
        serving.kill()
        assert serving.wait(timeout=30) == -signal.SIGKILL


def test_a_forked_service_is_killed_and_reported_like_any_process(tmp_path: Path) -> None:
    with run_service("risk", ["serve", "risk"], env=_env(tmp_path), log_dir=tmp_path) as risk:
        assert isinstance(risk.process, forked.ForkedProcess)
        assert risk.process.poll() is None
        risk.kill(signal.SIGKILL)
        assert risk.process.returncode == -signal.SIGKILL


def _ignored(pid: int) -> set[int]:
    """The signals process ``pid`` ignores (its SigIgn mask in /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            mask = int(line.split()[1], 16)
            return {n for n in range(1, 65) if mask >> (n - 1) & 1}
    raise AssertionError(f"no SigIgn line for {pid}")


def test_a_fork_ignores_what_a_python_command_ignores(tmp_path: Path) -> None:
    """Found by the kill -9 chaos run on forks: a fork left SIGPIPE at its default, where
    CPython's start ignores it, so a service that wrote to a peer just killed died of SIGPIPE
    (exit -13, nothing in its log) and the run waited for requests nobody served."""
    plain = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1)
    try:
        with run_service("risk", ["serve", "risk"], env=_env(tmp_path), log_dir=tmp_path) as risk:
            assert isinstance(risk.process, forked.ForkedProcess)
            # What CPython's start ignores (SIGPIPE, SIGXFSZ); the rest is inherited from the
            # parent (an xdist worker ignores SIGINT, for instance).
            at_start = {signal.SIGPIPE, signal.SIGXFSZ}
            assert at_start <= _ignored(plain.pid)
            assert at_start <= _ignored(risk.process.pid)
    finally:
        plain.communicate(timeout=30)


def test_the_child_has_its_own_environment_and_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The child's secret signs: not the test process's environment, nor the parent's.
    secret = "child-only-secret-" + "s" * 32
    signed = tmp_path / "signed.log"
    process = forked.start(
        ["token", "--user", "C-07"], _env(tmp_path, ACCORD_JWT_SECRET=secret), signed
    )
    assert process.wait(timeout=60) == 0
    claims = jwt.decode(signed.read_text().strip(), secret, algorithms=["HS256"], audience="accord")
    assert claims["sub"] == "C-07"
    # No secret and no data directory: the development secret is made under ./.accord of the
    # child's working directory.
    work = tmp_path / "work"
    work.mkdir()
    env = {
        k: v for k, v in _env(tmp_path).items() if k not in ("ACCORD_JWT_SECRET", "ACCORD_DATA_DIR")
    }
    import os

    here = os.getcwd()
    os.chdir(work)
    try:
        made = forked.start(["token", "--user", "C-07"], env, tmp_path / "made.log")
    finally:
        os.chdir(here)
    assert made.wait(timeout=60) == 0
    assert (work / ".accord" / "jwt-secret").exists()


@pytest.mark.parametrize(
    "variable",
    ["ACCORD_CONTRACTS_DIR", "ACCORD_OTEL_LIBRARY_SPANS", "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"],
)
def test_what_the_imports_read_is_not_forked(tmp_path: Path, variable: str) -> None:
    env = _env(tmp_path, **{variable: "true" if "OTEL" in variable else str(tmp_path)})
    assert not forked.forkable(env)
    process = forked.start(["--help"], env, tmp_path / "plain.log")
    assert isinstance(process, subprocess.Popen)
    assert process.wait(timeout=60) == 0


def test_an_ended_child_is_never_signalled(tmp_path: Path) -> None:
    """The parent reaps its children: a pid it has reaped may be a new process's by now, so a
    signal for it is dropped, never sent (found: a chaos test's late kill of a restarted
    service's old pid took down another service given that pid)."""
    done = forked.start(["--help"], _env(tmp_path), tmp_path / "done.log")
    assert isinstance(done, forked.ForkedProcess)
    assert done.wait(timeout=60) == 0
    assert not forked.signal_group(done.pid, signal.SIGKILL)  # dropped by the parent
    with run_service("risk", ["serve", "risk"], env=_env(tmp_path), log_dir=tmp_path) as risk:
        assert forked.signal_group(risk.process.pid, signal.SIGKILL)  # a living child: sent
        assert risk.process.wait(timeout=30) == -signal.SIGKILL
