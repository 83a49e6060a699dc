"""The deny list: credential ids (JWT ``jti`` or API key ids) that are refused.

A plain text file, one id a line (``#`` comments allowed), at ``ACCORD_REVOKED_FILE`` or
``data_dir()/revoked``. It is re-read when its modification time or size changes, so a revoked
credential is refused on its next request without a restart.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from accord.protocol.settings import current, data_dir


def revoked_file() -> Path:
    return current().revoked_file or data_dir() / "revoked"


class RevocationList:
    """Cached view of the deny-list file; one ``stat`` per check."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or revoked_file()
        self._stamp: tuple[int, int] | None = None
        self._ids: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def is_revoked(self, credential_id: str) -> bool:
        return bool(credential_id) and credential_id in self._current()

    def _current(self) -> frozenset[str]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return frozenset()
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            with self._lock:
                text = self.path.read_text(errors="replace")
                self._ids = frozenset(
                    line.split("#", 1)[0].strip()
                    for line in text.splitlines()
                    if line.split("#", 1)[0].strip()
                )
                self._stamp = stamp
        return self._ids


def revoke(credential_id: str, path: Path | None = None) -> Path:
    """Append ``credential_id`` to the deny list (created 0600 if missing)."""
    target = path or revoked_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as handle:
        handle.write(credential_id.strip() + "\n")
    return target
