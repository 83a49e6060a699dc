"""The deny list: credentials, and subjects whose older credentials, are refused.

A plain text file at ``ACCORD_REVOKED_FILE`` or ``data_dir()/revoked`` (created 0600), ``#``
comments allowed, one entry a line::

    3f9a0c...                               a credential id: a JWT ``jti`` or an API key id
    subject accord/alice 1764581400         every credential of app ``accord``, subject
                                            ``alice``, issued before that time (Unix seconds)
    key risk Xc2...                         every token signed by service ``risk``'s key
                                            with that ``kid`` (``accord keys revoke``)

A subject entry refuses each token of that owner whose ``iat`` is earlier than the time, so
"revoke a user" needs no list of their tokens, and tokens issued after it work again. The time
written is the next whole second after the revocation, so a token issued in the same second as
the revocation is refused too (``iat`` has whole seconds: same-second tokens cannot be told
apart, and refusing is the safe side). API keys carry no issue time: a subject entry refuses
the subject's keys for as long as the entry stands (remove the line to let them in again).

The file is re-read when its modification time or size changes, so a revocation is honoured on
the next request without a restart. Several replicas share it through a volume, or each gets
the same file from configuration.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from accord.protocol.auth.claims import check_name
from accord.protocol.auth.tokens import Principal, owner_key
from accord.protocol.private_files import open_private, private_dir
from accord.protocol.settings import current, data_dir

logger = logging.getLogger(__name__)

SUBJECT_WORD: Final = "subject"
KEY_WORD: Final = "key"
SERVICE_SUBJECT: Final = "svc:{}"


def revoked_file() -> Path:
    return current().revoked_file or data_dir() / "revoked"


@dataclass(frozen=True)
class DenyList:
    """One reading of the file."""

    credentials: frozenset[str] = frozenset()
    subjects: tuple[tuple[str, float], ...] = ()  # (owner "app/sub", refused before)
    keys: frozenset[tuple[str, str]] = frozenset()  # (service subject "svc:NAME", kid)

    def refuses(self, principal: Principal) -> str | None:
        """Why ``principal`` is refused, or None."""
        if principal.credential_id and principal.credential_id in self.credentials:
            return "credential has been revoked"
        if principal.key_id and (principal.subject, principal.key_id) in self.keys:
            return "the service key that signed this token has been revoked"
        owner = principal.owner
        for revoked_owner, before in self.subjects:
            if revoked_owner != owner:
                continue
            if principal.issued_at is None or principal.issued_at < before:
                return "every credential of this subject issued before its revocation is refused"
        return None


def parse_deny_list(text: str, source: str = "deny list") -> DenyList:
    credentials: set[str] = set()
    subjects: list[tuple[str, float]] = []
    keys: set[tuple[str, str]] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == KEY_WORD and len(words) == 3:
            keys.add((SERVICE_SUBJECT.format(words[1]), words[2]))
        elif words[0] == SUBJECT_WORD:
            try:
                owner, before = words[1], float(words[2])
                if len(words) != 3 or "/" not in owner:
                    raise ValueError(raw)
            except (IndexError, ValueError):
                logger.warning(
                    "%s line %d ignored: expected 'subject APP/SUB SECONDS'", source, number
                )
                continue
            subjects.append((owner, before))
        elif len(words) == 1:
            credentials.add(words[0])
        else:
            logger.warning("%s line %d ignored: one credential id a line", source, number)
    return DenyList(frozenset(credentials), tuple(subjects), frozenset(keys))


class RevocationList:
    """Cached view of the deny-list file; one ``stat`` per check."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or revoked_file()
        self._stamp: tuple[int, int] | None = None
        self._list = DenyList()
        self._lock = threading.Lock()

    def is_revoked(self, credential_id: str) -> bool:
        return bool(credential_id) and credential_id in self._current().credentials

    def refuses(self, principal: Principal) -> str | None:
        """Why ``principal`` is refused (its credential, or its subject, revoked), or None."""
        return self._current().refuses(principal)

    def _current(self) -> DenyList:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return DenyList()
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            with self._lock:
                self._list = parse_deny_list(self.path.read_text(errors="replace"), str(self.path))
                self._stamp = stamp
        return self._list


def _append(line: str, path: Path | None) -> Path:
    target = path or revoked_file()
    private_dir(target.parent)
    with os.fdopen(open_private(target, os.O_WRONLY | os.O_APPEND), "a") as handle:
        handle.write(line + "\n")
    return target


def revoke(credential_id: str, path: Path | None = None) -> Path:
    """Append ``credential_id`` (a ``jti`` or API key id) to the deny list (created 0600)."""
    value = credential_id.strip()
    if not value or any(c.isspace() for c in value) or value.startswith("#"):
        raise ValueError(f"not a credential id: {credential_id!r}")
    return _append(value, path)


def revoke_subject(
    app: str, subject: str, *, before: float | None = None, path: Path | None = None
) -> tuple[Path, int]:
    """Refuse every credential of ``app``/``subject`` issued before ``before`` (default: now,
    rounded up to the next whole second); returns the file and the time written. A name that
    no credential could carry is a :class:`~accord.protocol.auth.claims.ClaimError`."""
    check_name("app", app)
    check_name("sub", subject)
    cutoff = math.floor(time.time()) + 1 if before is None else math.ceil(before)
    when = datetime.fromtimestamp(cutoff, UTC).isoformat()
    return _append(f"{SUBJECT_WORD} {owner_key(app, subject)} {cutoff}  # {when}", path), cutoff


def revoke_key(service: str, kid: str, path: Path | None = None) -> Path:
    """Refuse every token signed by ``service``'s key ``kid`` (``accord keys revoke``)."""
    if not service or not kid or any(c.isspace() or c == "#" for c in service + kid):
        raise ValueError(f"not a service and key id: {service!r} {kid!r}")
    when = datetime.fromtimestamp(time.time(), UTC).isoformat()
    return _append(f"{KEY_WORD} {service} {kid}  # revoked {when}", path)
