"""Is a secret guessable? Length, placeholders, and an entropy estimate (zxcvbn).

A 32-byte secret can still be guessed: ``abcdefgh`` four times, ``accordaccord...`` or a
phrase of dictionary words pass a length check (issue #30 found production accepting them).
zxcvbn estimates the guesses an attacker needs, knowing repeats, sequences, keyboard patterns
and common words; a secret must need at least 10^:data:`MIN_GUESSES_LOG10` (about 100 bits):
32 random URL-safe characters (``secrets.token_urlsafe(24)``) or 64 hex digits
(``openssl rand -hex 32``) do, anything a person typed does not. Used for ``ACCORD_JWT_SECRET``
and for API keys (:mod:`accord.protocol.auth.api_keys`).
"""

from __future__ import annotations

import re
from typing import Final

from zxcvbn import zxcvbn

MIN_SECRET_BYTES: Final = 32
PLACEHOLDER: Final = re.compile(r"replace[_-]?me|change[_-]?me|placeholder|example|secret", re.I)
MIN_DISTINCT_CHARS: Final = 8  # "aaaa...", "abababab...": not a random secret
MIN_GUESSES_LOG10: Final = 30.0
ESTIMATED_CHARS: Final = 100  # zxcvbn is quadratic in length; a longer prefix only adds guesses


def weakness(value: str) -> str | None:
    """Why ``value`` cannot be a real secret (never quoting it), or None."""
    if len(value.encode()) < MIN_SECRET_BYTES:
        return f"is shorter than {MIN_SECRET_BYTES} bytes"
    if PLACEHOLDER.search(value):
        return "looks like a placeholder (e.g. the REPLACE_ME value deploy/k8s/secret.yaml ships)"
    if len(set(value)) < MIN_DISTINCT_CHARS:
        return f"has fewer than {MIN_DISTINCT_CHARS} distinct characters: not a random secret"
    guesses = float(zxcvbn(value[:ESTIMATED_CHARS])["guesses_log10"])
    if guesses < MIN_GUESSES_LOG10:
        return (
            f"is guessable (about 10^{guesses:.0f} guesses, fewer than 10^{MIN_GUESSES_LOG10:.0f}"
            "): use a random value, e.g. `openssl rand -hex 32`"
        )
    return None
