"""Static API keys: ``ACCORD_API_KEYS`` names a YAML file mapping each key to a principal.

    # keys.yaml
    "k-3f9a...":            # the key the caller sends in X-API-Key
      subject: svc:batch
      roles: [service]
      app: accord           # optional, default "accord"
      id: batch-2026-01     # optional key id for revocation and logs
      scopes: [orders.lookup]  # optional grants (the tools a service key may call)

A key without ``id`` is known by ``key:`` + the first 12 hex digits of its SHA-256, so the key
itself never appears in logs or in the deny list. The file is re-read when it changes.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import yaml

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import DEFAULT_APP, Principal
from accord.protocol.settings import current


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKeys:
    """Keys from the YAML file, looked up by SHA-256 digest."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or current().api_keys
        self._stamp: tuple[int, int] | None = None
        self._by_digest: dict[str, Principal] = {}
        self._lock = threading.Lock()

    def lookup(self, key: str) -> Principal | None:
        # Looked up by digest: the key itself is never compared or kept in memory.
        return self._current().get(key_digest(key))

    def _current(self) -> dict[str, Principal]:
        if self.path is None:
            return {}
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return {}
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            with self._lock:
                self._by_digest = _parse(self.path)
                self._stamp = stamp
        return self._by_digest


def _parse(path: Path) -> dict[str, Principal]:
    raw: Any = yaml.safe_load(path.read_text()) or {}
    if not isinstance(raw, dict):
        raise AccordError(ErrorCode.INVALID_INPUT, f"{path}: API key file must be a mapping")
    out: dict[str, Principal] = {}
    for key, entry in raw.items():
        if not isinstance(key, str) or not isinstance(entry, dict):
            raise AccordError(ErrorCode.INVALID_INPUT, f"{path}: each key maps to a mapping")
        subject = entry.get("subject")
        roles = entry.get("roles", [])
        if not isinstance(subject, str) or not subject or not isinstance(roles, list):
            raise AccordError(
                ErrorCode.INVALID_INPUT, f"{path}: each key needs subject and a roles list"
            )
        digest = key_digest(key)
        key_id = entry.get("id") or f"key:{digest[:12]}"
        out[digest] = Principal(
            subject=subject,
            roles=frozenset(str(r) for r in roles),
            app=str(entry.get("app") or DEFAULT_APP),
            credential_id=str(key_id),
            scopes=frozenset(str(s) for s in entry.get("scopes") or []),
        )
    return out
