"""One circuit breaker per dependency (tool server, peer agent), shared by a whole process.

Every caller in a process that reaches the same dependency shares its breaker, so that a
service that is down is not hammered by every waiting workflow at once:

- closed: calls go through; ``FAILURES_TO_OPEN`` retryable failures in a row open it;
- open: calls fail at once with UNAVAILABLE (a retry-class error: the caller's backoff, a
  durable workflow timer, waits) until the cool-down passes; the cool-down doubles with each
  opening (``COOL_FIRST_S`` to ``COOL_MAX_S``, with jitter so replicas do not probe together);
- half-open (cool-down over): calls go through; the first success closes it, a failure
  opens it again for longer.

Only UNAVAILABLE and RETRYABLE_TIMEOUT count (the dependency is unreachable or too slow):
RATE_LIMITED is the caller's own budget there (its backoff handles it), and a refusal
(PERMISSION_DENIED, INVALID_INPUT) says the dependency is up.
``/readyz`` lists the open breakers as ``degraded`` (:func:`degraded`). A breaker is keyed by
name and URL: two servers of one name at different addresses (tests) never share one.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import SENT_DETAIL_KEY

FAILURES_TO_OPEN: Final = 3
COOL_FIRST_S: Final = 0.5
COOL_MAX_S: Final = 8.0
OPENS: Final = frozenset({ErrorCode.UNAVAILABLE, ErrorCode.RETRYABLE_TIMEOUT})


@dataclass
class Breaker:
    name: str
    url: str
    failures: int = 0  # retryable failures in a row
    openings: int = 0  # times opened since it last closed
    open_until: float = 0.0  # monotonic; 0: closed

    def refuse(self, now: float | None = None) -> AccordError | None:
        """The error to fail a call with at once while open; None: let it through."""
        left = self.open_until - (time.monotonic() if now is None else now)
        if left <= 0:
            return None
        return AccordError(
            ErrorCode.UNAVAILABLE,
            f"{self.name} is degraded; calls resume shortly",
            {
                "dependency": self.name,
                "retry_after_ms": int(left * 1000) + 1,
                SENT_DETAIL_KEY: False,  # refused here: the call never left
            },
        )

    def record(self, error: AccordError | None, now: float | None = None) -> None:
        """The outcome of a call that went through (None: it succeeded)."""
        if error is None or error.code not in OPENS:
            self.failures, self.openings, self.open_until = 0, 0, 0.0
            return
        self.failures += 1
        half_open = self.openings > 0
        if self.failures >= FAILURES_TO_OPEN or half_open:
            cool = min(COOL_MAX_S, COOL_FIRST_S * 2**self.openings)
            self.openings += 1
            self.open_until = (time.monotonic() if now is None else now) + random.uniform(
                cool / 2, cool
            )
            self.failures = 0

    @property
    def is_open(self) -> bool:
        return self.open_until > time.monotonic()


_BREAKERS: dict[tuple[str, str], Breaker] = {}
_LOCK = threading.Lock()  # clients may live on several event loops (tests, the CLI)


def breaker(name: str, url: str) -> Breaker:
    """The process's breaker for the dependency ``name`` at ``url``."""
    with _LOCK:
        found = _BREAKERS.get((name, url))
        if found is None:
            found = _BREAKERS[(name, url)] = Breaker(name, url)
        return found


def degraded() -> list[str]:
    """Names of the dependencies whose breaker is open now, sorted."""
    with _LOCK:
        return sorted({b.name for b in _BREAKERS.values() if b.is_open})
