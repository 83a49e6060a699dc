"""Accord's signature on a push notification, and how a receiver checks it.

A config may carry a token the caller chose (A2A's ``token``, optional in A2A 1.0.1). When it
has at least :data:`MIN_TOKEN_CHARS` characters, Accord adds to each request, beside what A2A
asks for (the config's ``authentication`` as ``Authorization``, the token as
``X-A2A-Notification-Token``), ``X-Accord-Signature: t=<unix seconds>,v1=<hex>`` where
``hex`` is HMAC-SHA256, keyed by the token, of ``t + "." + notification id + "." + body``.
A receiver recomputes it with the token it gave, compares in constant time, and refuses a
timestamp older than it tolerates (replays). Beside the bare token, the signature proves the
body is the agent's and recent. A shorter token (or none) signs nothing: an HMAC keyed by a
few guessable characters would prove nothing; a receiver that wants proof gives a long token
or checks its ``Authorization``.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Final

MIN_TOKEN_CHARS: Final = 16
DEFAULT_TOLERANCE_S: Final = 300.0


def signs(token: str) -> bool:
    """Whether a config's token is long enough to key Accord's signature."""
    return len(token) >= MIN_TOKEN_CHARS


def sign(token: str, notification_id: str, body: bytes, *, now: float | None = None) -> str:
    """The ``X-Accord-Signature`` header value."""
    t = int(now if now is not None else time.time())
    return f"t={t},v1={_mac(token, t, notification_id, body)}"


def verify(
    token: str,
    notification_id: str,
    body: bytes,
    header: str,
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """Whether ``header`` signs ``body`` with ``token``, within ``tolerance_s`` of now."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        t = int(fields["t"])
        given = fields["v1"]
    except (KeyError, ValueError):
        return False
    if abs((now if now is not None else time.time()) - t) > tolerance_s:
        return False
    return hmac.compare_digest(given, _mac(token, t, notification_id, body))


def _mac(token: str, t: int, notification_id: str, body: bytes) -> str:
    message = f"{t}.{notification_id}.".encode() + body
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()
