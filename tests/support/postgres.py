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
from dataclasses import dataclass
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


@dataclass
class Server:
    """A private PostgreSQL server: its URL, and a stop and start on the same port and data
    (a restart of the database, as tests/mesh/test_cluster_single_points.py does)."""

    url: str
    bin_dir: Path
    root: Path
    port: int
    # Off for speed; on where the server is stopped with ``-m immediate`` (a crash): a commit
    # answered before its WAL was written would be lost, as on any server configured so.
    synchronous_commit: bool = False

    @property
    def data(self) -> Path:
        return self.root / "data"

    def start(self) -> None:
        sync = "on" if self.synchronous_commit else "off"
        opts = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            f"-c max_connections=300 -c synchronous_commit={sync}"
        )
        command = [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-o", opts]
        command += ["-l", str(self.root / "log"), "-w", "start"]
        subprocess.run(_as_postgres(command), check=True, capture_output=True)

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m MODE``: ``fast`` (sessions ended, a clean shutdown) or
        ``immediate`` (no shutdown checkpoint: crash recovery at the next start)."""
        command = [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"]
        subprocess.run(_as_postgres(command), check=True, capture_output=True)


@contextmanager
def private_server(*, synchronous_commit: bool = False) -> Iterator[Server]:
    """A private PostgreSQL server with a database ``accord``, removed at the end."""
    bin_dir = pg_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install -y postgresql)")
    root = Path(tempfile.mkdtemp(prefix="accord-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        os.chmod(root, 0o755)
    port = free_port()
    url = f"postgresql://accord@127.0.0.1:{port}/accord"
    server = Server(url, bin_dir, root, port, synchronous_commit)
    initdb = [str(bin_dir / "initdb"), "-D", str(server.data), "-U", "accord", "--auth=trust"]
    subprocess.run(
        _as_postgres([*initdb, "-E", "UTF8", "--no-sync"]), check=True, capture_output=True
    )
    server.start()
    try:
        createdb = [str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port)]
        subprocess.run(
            _as_postgres([*createdb, "-U", "accord", "accord"]), check=True, capture_output=True
        )
        yield server
    finally:
        subprocess.run(
            _as_postgres(
                [str(bin_dir / "pg_ctl"), "-D", str(server.data), "-m", "immediate", "stop"]
            ),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def private_cluster() -> Iterator[str]:
    """Yield a SQLAlchemy-style URL ``postgresql://accord@127.0.0.1:PORT/accord``."""
    with private_server() as server:
        yield server.url


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
