"""Issue #12: "SQLite files are world-readable (0644)". The data directory of a real mesh
(`accord up`'s start-up, five services) and of a lone `accord serve` is 0700, and every file in
it (SQLite databases and their -wal/-shm, the development secret, the deny list, the logs) is
0600, even under a umask that would leave them open to everyone."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from accord.cli.mesh import free_ports, start_mesh
from tests.security.tokens_support import clean_env, serve


@contextmanager
def umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def modes(root: Path) -> dict[str, int]:
    """Every directory and file under ``root`` (itself included): its permission bits."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return found


def assert_private(root: Path) -> dict[str, int]:
    found = modes(root)
    wrong = {
        name: oct(mode)
        for name, mode in found.items()
        if mode != (0o700 if (root / name).is_dir() else 0o600)
    }
    assert not wrong, f"not private: {wrong}"
    return found


def test_an_accord_up_data_dir_is_0700_with_0600_files(tmp_path: Path) -> None:
    data = tmp_path / "mesh"
    env = clean_env(data)
    with umask(0):  # the children inherit it: any file created with a default mode shows
        mesh = start_mesh(data, ports=free_ports(), env=env, deadline_s=120.0)
    try:
        revoke = subprocess.run(
            [sys.executable, "-m", "accord.cli.main", "token", "revoke", "--jti", "j-1"],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert revoke.returncode == 0, revoke.stderr
        found = assert_private(data)
    finally:
        mesh.stop()
    for name in ("jwt-secret", "revoked", "logs", "logs/orchestrator.log"):
        assert name in found
    databases = {name for name in found if name.endswith(".db")}
    assert {"orchestrator-workflows.db", "commerce.db", "payments.db"} <= databases
    assert any(name.endswith("-wal") for name in found)
    assert any(name.endswith("-shm") for name in found)
    assert_private(data)  # after the shutdown's checkpoints too


def test_a_lone_service_makes_its_data_dir_private(tmp_path: Path) -> None:
    data = tmp_path / "nested" / "data"
    with umask(0), serve("payments", clean_env(data), tmp_path):
        found = assert_private(data)
    assert {"payments.db", "jwt-secret"} <= set(found)
