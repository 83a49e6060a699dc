"""`mvn package` of a reactor, one build at a time on this machine.

Both Java reactors of the tests (tools/java and tests/interop/java) build contracts/java as a
module, into the same contracts/java/target: two at once (two pytest-xdist workers) would
compile over each other's classes. An exclusive lock on a file beside the checkout makes them
take turns; the second build finds the first's output and only compiles what it adds.
"""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def maven_package(reactor: Path, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """``mvn -q -B package -DskipTests`` in ``reactor``, holding this checkout's build lock."""
    name = hashlib.sha256(str(ROOT).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"accord-maven-{name}.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file is closed
        return subprocess.run(
            ["mvn", "-q", "-B", "package", "-DskipTests"],
            cwd=reactor,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
