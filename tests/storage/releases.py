"""The last release's code, installed beside the working tree, for rolling-upgrade tests.

The releases are recorded in ``contracts/releases/<vX.Y.Z>/release.yaml`` (version, commit,
date, contract_version). ``build(release)`` installs the newest one from git history, without
touching the working tree: ``git archive <commit>`` unpacked into a directory of its own, and a
virtual environment made there with the repository's pinned uv (``uv sync --frozen
--all-packages --no-dev``: the release's own lock, its packages editable from that directory),
bytecode compiled (this machine sets ``PYTHONDONTWRITEBYTECODE``: without it every start of an
old replica would compile every module it imports).

The result is kept between runs, keyed by the commit and the interpreter, under
``$ACCORD_TEST_RELEASE_CACHE`` (default ``$XDG_CACHE_HOME/accord/releases``, i.e.
``~/.cache/accord/releases``): every clone and worktree of the repository on the machine shares
it, and a file lock lets parallel test workers build it once. A directory without its ``ready``
stamp (a build that was interrupted) is built again.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from accord.contracts.evolution.baseline import baselines
from accord.contracts.evolution.release_record import ReleaseRecord

REPO: Final = Path(__file__).resolve().parents[2]
RELEASES_DIR: Final = REPO / "contracts" / "releases"
CACHE_VARIABLE: Final = "ACCORD_TEST_RELEASE_CACHE"
# Members whose sources the release's environment runs (editable installs).
MEMBERS: Final = ("contracts", "protocol", "tools", "agents")


class ReleaseUnavailableError(Exception):
    """The release's commit is not in this clone (a shallow clone, history rewritten)."""


# A recorded release (contracts/releases/vX.Y.Z/release.yaml), read as `accord contracts
# compat` reads it.
Release = ReleaseRecord


@dataclass(frozen=True)
class ReleaseEnv:
    """A release installed beside the working tree: its sources and its interpreter."""

    release: Release
    root: Path  # the release's files (git archive of its commit)
    python: Path  # the interpreter of its virtual environment
    build_s: float  # what building it cost (0.0 when it came from the cache)
    cached: bool

    def command(self, *args: str) -> list[str]:
        """The release's ``accord ARGS``: the command beside its interpreter (its module moved,
        accord.agents.cli until 0.3 and accord.cli since; the command did not)."""
        return [str(self.python.parent / "accord"), *args]

    def env(self) -> dict[str, str]:
        """Variables the release's processes need on top of a service's: no ``PYTHONPATH`` of
        this process may bring the working tree's modules in (an empty value is no path)."""
        return {"PYTHONPATH": "", "VIRTUAL_ENV": str(self.python.parent.parent)}


def releases(directory: Path = RELEASES_DIR) -> list[Release]:
    """Every recorded release, oldest first (by version, not by directory name)."""
    return [baseline.record for baseline in baselines(directory)]


def last_release(directory: Path = RELEASES_DIR) -> Release:
    recorded = releases(directory)
    if not recorded:
        raise LookupError(f"no release recorded in {directory}")
    return recorded[-1]


def has_commit(commit: str, repo: Path = REPO) -> bool:
    found = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return found.returncode == 0


def cache_root() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "accord" / "releases"


def interpreter() -> Path:
    """The real interpreter behind this environment's ``python`` (uv wants the real path: a
    pyenv shim or a venv's link would not do)."""
    return Path(os.path.realpath(sys.executable))


def build(release: Release, cache: Path | None = None, repo: Path = REPO) -> ReleaseEnv:
    """``release`` installed under ``cache`` (built once per commit and interpreter)."""
    if release.commit is None or not has_commit(release.commit, repo):
        raise ReleaseUnavailableError(
            f"release {release.tag}'s commit {release.commit} is not in this clone "
            f"({repo}); a shallow clone needs `git fetch --unshallow`"
        )
    python = interpreter()
    major, minor = sys.version_info[:2]
    root = (cache or cache_root()) / f"{release.tag}-{release.commit[:12]}-py{major}{minor}"
    root.parent.mkdir(parents=True, exist_ok=True)
    with _locked(root.parent / f"{root.name}.lock"):
        stamp = root / "ready.json"
        if stamp.exists():
            return ReleaseEnv(release, root / "src", root / "venv" / "bin" / "python", 0.0, True)
        shutil.rmtree(root, ignore_errors=True)
        started = time.monotonic()
        steps = _build(release.commit, root, python, repo)
        took = time.monotonic() - started
        stamp.write_text(json.dumps({"release": release.version, "seconds": steps}, indent=1))
        return ReleaseEnv(release, root / "src", root / "venv" / "bin" / "python", took, False)


def _build(commit: str, root: Path, python: Path, repo: Path) -> dict[str, float]:
    src, venv = root / "src", root / "venv"
    src.mkdir(parents=True)
    steps: dict[str, float] = {}
    with _timed(steps, "git archive"):
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", commit],
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(src, filter="data")
    uv = repo / ".tools" / "bin" / "uv"
    if not uv.exists():
        raise FileNotFoundError(f"{uv} is missing: run `make setup` first")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(UV_PYTHON=str(python), UV_PROJECT_ENVIRONMENT=str(venv))
    # As `make setup` does, without the dev tools: the installed packages' bytecode by uv,
    # the members' (editable, so outside site-packages) by compileall.
    sync = [str(uv), "sync", "--frozen", "--all-packages", "--no-dev", "--quiet"]
    with _timed(steps, "uv sync --compile-bytecode"):
        _run([*sync, "--compile-bytecode"], src, env)
    venv_python = venv / "bin" / "python"
    with _timed(steps, "compileall members"):
        _run([str(venv_python), "-m", "compileall", "-q", *MEMBERS], src, env)
    # The release's interpreter must import the release's modules, not the working tree's.
    probe = subprocess.run(
        # accord.contracts: a module every release has (the CLI's moved in 0.3).
        [str(venv_python), "-c", "import accord.contracts as m; print(m.__file__)"],
        cwd=src,
        env={**env, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    imported = Path(probe.stdout.strip()).resolve()
    if not imported.is_relative_to(src.resolve()):
        raise RuntimeError(f"the release's environment imports {imported}, not from {src}")
    return steps


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-4000:]}")


@contextmanager
def _timed(steps: dict[str, float], name: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    steps[name] = round(time.monotonic() - started, 2)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (test workers, two test runs) for one build."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
