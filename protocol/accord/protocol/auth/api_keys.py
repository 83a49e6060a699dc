"""Static API keys: ``ACCORD_API_KEYS`` names a YAML file mapping each key to a principal.

    # keys.yaml
    "k-3f9a...":            # the key the caller sends in X-API-Key
      subject: svc:batch
      roles: [service]
      app: accord           # optional, default "accord"
      id: batch-2026-01     # optional key id for revocation and logs
      scopes: [tickets.get]    # optional grants (the tools a service key may call)

In production mode the file must be readable by its owner only (0600) and every key long and
random (:mod:`accord.protocol.secret_strength`): a start-up refusal names the entries, never a
key. A key without ``id`` is known by ``key:`` + the first 12 hex digits of its SHA-256, so the key
itself never appears in logs or in the deny list. The file is re-read when it changes.

``subject``, ``app`` and ``roles`` follow the same rules as a token's claims
(:mod:`accord.protocol.auth.claims`: no ``/``, known roles only). A file that breaks them is
refused as a whole, INVALID_INPUT naming the file and the entry (by its id or its position,
never by the key): half a keys file is worse than a clear error at the first request.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path
from typing import Any

import yaml

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth.claims import ClaimError, check_name, check_roles
from accord.protocol.auth.tokens import DEFAULT_APP, Principal
from accord.protocol.secret_strength import weakness
from accord.protocol.settings import current

logger = logging.getLogger(__name__)


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
        try:
            return self._current().get(key_digest(key))
        except AccordError as error:
            # Fails closed: an edit that broke the file refuses every key (the edit may have
            # been the removal of a leaked one) and says why in the log, not to the caller.
            logger.error("API keys refused until the file is fixed: %s", error.message)
            return None

    def load(self) -> int:
        """Read the file now (start-up): the number of keys, or the INVALID_INPUT error."""
        return len(self._current())

    def weak_entries(self) -> list[str]:
        """The entries whose key is short or guessable (production refuses them), by id or
        position, never by the key."""
        if self.path is None or not self.path.exists():
            return []
        raw: Any = yaml.safe_load(self.path.read_text()) or {}
        if not isinstance(raw, dict):
            return []  # _parse says why, at start-up
        weak: list[str] = []
        for position, (key, entry) in enumerate(raw.items(), start=1):
            why = weakness(str(key))
            if why is not None:
                key_id = entry.get("id") if isinstance(entry, dict) else None
                weak.append(
                    f"entry {position} (id {key_id or 'key:' + key_digest(str(key))[:12]}) {why}"
                )
        return weak

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
                self._by_digest = {}
                self._stamp = stamp
                self._by_digest = _parse(self.path)
        return self._by_digest


def _parse(path: Path) -> dict[str, Principal]:
    raw: Any = yaml.safe_load(path.read_text()) or {}
    if not isinstance(raw, dict):
        raise AccordError(ErrorCode.INVALID_INPUT, f"{path}: API key file must be a mapping")
    out: dict[str, Principal] = {}
    for position, (key, entry) in enumerate(raw.items(), start=1):
        if not isinstance(key, str) or not key or not isinstance(entry, dict):
            raise AccordError(ErrorCode.INVALID_INPUT, f"{path}: each key maps to a mapping")
        digest = key_digest(key)
        key_id = str(entry.get("id") or f"key:{digest[:12]}")
        try:
            subject = check_name("subject", entry.get("subject"))
            app = check_name("app", entry.get("app") or DEFAULT_APP)
            roles = check_roles(entry.get("roles"))
        except ClaimError as error:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"{path}: entry {position} (id {key_id}): {error.message}",
                {"path": str(path), "entry": position, "field": error.claim},
            ) from None
        scopes = entry.get("scopes") or []
        if not isinstance(scopes, list):
            raise AccordError(
                ErrorCode.INVALID_INPUT, f"{path}: entry {position} (id {key_id}): scopes is a list"
            )
        out[digest] = Principal(
            subject=subject,
            roles=roles,
            app=app,
            credential_id=key_id,
            scopes=frozenset(str(s) for s in scopes),
        )
    return out
