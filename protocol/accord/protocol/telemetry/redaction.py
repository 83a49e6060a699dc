"""Nothing secret in a log line, at any level, whoever logged it.

:class:`RedactingFilter` sits on the service's log handler (:func:`configure_logging`), so it
sees every record the process writes: ours, and the SDKs' DEBUG output (httpx, httpcore, a2a,
mcp, uvicorn, whose loggers propagate to it). It renders the record's message with its
arguments, rewrites what looks secret, and stores the result back as the message (so every
formatter, text or JSON, prints the redacted text), and does the same for a traceback.

What is rewritten (each rule one row of :data:`RULES`):

- the values of ``Authorization``, ``Proxy-Authorization``, ``X-API-Key``, ``Cookie``,
  ``Set-Cookie`` and ``X-A2A-Notification-Token`` (a push config's token), written as
  ``name: value``, ``'name': 'value'``, ``(b'name', b'value')`` or ``name=value``;
- ``Bearer <token>`` anywhere, and any JWT-shaped string (``eyJ...``.``...``.``...``);
- the values of known secret fields (``jwt_secret``, ``password``, ``api_key``, ``token``,
  ``client_secret``, ``credentials`` (a push config's), ...) written the same ways, except as
  a pair: a value that merely ends in one of those names never redacts the key after it;
- the password of a URL (``postgresql://accord:PASSWORD@host/db``);
- literally, the configured secret values (``ACCORD_JWT_SECRET``, ``ACCORD_TOKEN``,
  ``ACCORD_API_KEY``, the development secret, the push secrets key) wherever they appear.

A pattern cannot know every secret; the literal values cover the ones this process holds.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Final

MASK: Final = "[REDACTED]"

_HEADER_NAMES: Final = (
    r"authorization|proxy-authorization|x-api-key|cookie|set-cookie|x-a2a-notification-token"
)
_SECRET_FIELDS: Final = (
    r"jwt_secret|secret|password|passwd|pwd|api_key|apikey|token|access_token|"
    r"refresh_token|id_token|client_secret|private_key|credentials"
)
# Between a name and its value: quotes, a colon or an equals sign, blanks, and a bytes prefix,
# as in "name: v", "'name': 'v'", "\"name\": \"v\"", "name=v". Never a comma: in
# "{'a': 'my_token', 'b': 'v'}" a *value* ending in "token" is followed by a comma, and a comma
# separator moved the redaction onto the next key, leaving the secret one in clear (#30).
_SEP: Final = r"""(["']?\s*[:=]\s*(?-i:b)?["']?)"""
# A header as a pair, "(b'name', b'value')" (httpx's debug lines): here the comma separates.
_PAIR: Final = r"""(\(\s*(?-i:b)?["'])"""

RULES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    # Header values run to the closing quote or the end of the line ("Bearer x" has a blank).
    (re.compile(rf"(?i)(?<![\w-])({_HEADER_NAMES})(?![\w-]){_SEP}[^\"'\r\n]+"), rf"\1\2{MASK}"),
    (
        re.compile(rf"""(?i){_PAIR}({_HEADER_NAMES})(["']\s*,\s*(?-i:b)?["'])[^"'\r\n]+"""),
        rf"\1\2\3{MASK}",
    ),
    (
        re.compile(rf"(?i)(?<![\w-])({_SECRET_FIELDS})(?![\w-]){_SEP}[^\"'\s,;&)}}\]]+"),
        rf"\1\2{MASK}",
    ),
    # A bearer credential is long (a word after "bearer" in a sentence is not one).
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{16,}"), rf"\1 {MASK}"),
    (re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), MASK),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+@"), rf"\1{MASK}@"),
)
MIN_LITERAL: Final = 8  # shorter "secrets" would redact ordinary words


def redact(text: str, literals: Iterable[str] = ()) -> str:
    """``text`` with every secret-looking value replaced by :data:`MASK`."""
    for value in literals:
        if value in text:
            text = text.replace(value, MASK)
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text


_literals: set[str] = set()


def register_secret(value: str | None) -> None:
    """Redact this exact value from every log line from now on (a secret this process holds)."""
    if value and len(value) >= MIN_LITERAL:
        _literals.add(value)


class RedactingFilter(logging.Filter):
    """Rewrites each record's message (and traceback) through :func:`redact`."""

    def __init__(self, literals: Iterable[str] = ()) -> None:
        super().__init__()
        self._literals = _literals
        self._formatter = logging.Formatter()
        for value in literals:
            register_secret(value)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: show it unformatted, still redacted
            message = f"{record.msg} {record.args!r}"
        record.msg = redact(message, self._literals)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self._literals)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self._literals)
        return True
