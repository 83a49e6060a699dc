"""A private PostgreSQL cluster for the test session (Debian's postgresql package).

Started once per session in a temporary directory owned by the ``postgres`` user (initdb
refuses to run as root), on a free port, and removed at the end. On CI a missing server is
an error, never a silent skip.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.ports import free_port


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    return Path(which).parent if which else None


def available() -> bool:
    return pg_bin() is not None


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


@contextmanager
def private_cluster() -> Iterator[str]:
    """Yield a SQLAlchemy-style URL ``postgresql://accord@127.0.0.1:PORT/accord``."""
    bin_dir = pg_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install -y postgresql)")
    root = Path(tempfile.mkdtemp(prefix="accord-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        os.chmod(root, 0o755)
    port = free_port()
    subprocess.run(
        _as_postgres(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "accord",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
    )
    opts = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c max_connections=300 -c synchronous_commit=off"
    )
    subprocess.run(
        _as_postgres(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                opts,
                "-l",
                str(root / "log"),
                "-w",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            _as_postgres(
                [
                    str(bin_dir / "createdb"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "-U",
                    "accord",
                    "accord",
                ]
            ),
            check=True,
            capture_output=True,
        )
        yield f"postgresql://accord@127.0.0.1:{port}/accord"
    finally:
        subprocess.run(
            _as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


_counter = 0


def fresh_database(server_url: str) -> str:
    """Create an empty database on the session cluster and return its URL."""
    global _counter
    _counter += 1
    name = f"t{os.getpid()}_{_counter}"
    bin_dir = pg_bin()
    assert bin_dir is not None
    host_port = server_url.split("@", 1)[1].split("/", 1)[0]
    host, port = host_port.split(":")
    subprocess.run(
        [str(bin_dir / "createdb"), "-h", host, "-p", port, "-U", "accord", name],
        check=True,
        capture_output=True,
    )
    return server_url.rsplit("/", 1)[0] + "/" + name
