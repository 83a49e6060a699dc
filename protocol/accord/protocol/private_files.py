"""Directories and files only this service's user may read: 0700 and 0600.

The data directory holds the development JWT secret, the deny list and SQLite files with
the application's customers' data; other local users must not read them (issue #12 found SQLite
files 0644). Modes are given at creation (``os.open`` / ``mkdir`` with a mode, so there is no
window in which the file exists with the umask's wider mode); SQLite then gives its ``-wal``
and ``-shm`` files the mode of the database file. A directory that already exists is left as
it is (it may be a home directory or a mounted volume): :func:`is_shared` lets start-up say so.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Final

DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600


def private_dir(path: Path) -> Path:
    """``path`` (and missing parents, whose mode is the umask's) created 0700 if missing."""
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another process made it just now
            path.mkdir(mode=DIR_MODE)
            os.chmod(path, DIR_MODE)  # mkdir's mode is masked by the umask; 0700 is the point
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty and 0600 if it does not exist (an existing file is kept)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    return path


def create_once(path: Path, value: str) -> str:
    """Write ``value`` to ``path`` (0600) unless ``path`` exists; return what ``path`` holds.

    For development secrets that services starting together make on first use: the value is
    written whole under a name of its own, then linked into place. ``link`` fails when the
    file exists, so all of them keep one value, and none ever reads a file another has created
    but not yet written (``O_EXCL`` on the file itself left that window open).
    """
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(value)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            return path.read_text().strip()
    finally:
        draft.unlink(missing_ok=True)
    return value


def open_private(path: Path, flags: int) -> int:
    """``os.open`` that creates a missing file 0600 (for appends and exclusive creation)."""
    return os.open(path, flags | os.O_CREAT, FILE_MODE)


def is_shared(path: Path) -> bool:
    """True if group or others may read or enter ``path``."""
    try:
        return bool(path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO))
    except FileNotFoundError:
        return False


def shared_reason(path: Path, what: str) -> str | None:
    """Why a file of secrets (an API key file, a key ring) may not be used as it is: other
    users may read it. None when only its owner (and its own group) may, or it is missing."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None
    # Group access is the pod's own group in Kubernetes (fsGroup: a Secret volume is 0440 to
    # it); any other group, or anyone, reading it is what we refuse.
    group_ok = path.stat().st_gid == os.getgid()
    if mode & stat.S_IRWXO or (mode & stat.S_IRWXG and not group_ok):
        return (
            f"{what} ({path}) may be read by group or others (mode {mode:04o}): `chmod 600 {path}`"
        )
    return None
