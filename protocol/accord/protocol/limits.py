"""Per-caller limits of one service process: a request rate (token bucket) and a cap on open
event streams, keyed by the verified principal's owner scope (``app/subject``).

Limits are per process on purpose: they bound what one caller can make this process do (CPU,
memory, file descriptors), which is what runs out; a mesh-wide quota belongs in front of the
mesh (an API gateway). Both tables are bounded: the least recently seen callers are forgotten
first, which only ever forgives a caller, never blocks one.

Without authentication (``accord serve --auth none``) every caller is the one anonymous
principal, so its bucket carries all of them together, as a service principal carries all of
its customers: it gets the service rate, not a person's. Telling anonymous callers apart by
address would not work (behind a load balancer or a port-forward every client is loopback), and a
person's 50 a second, shared by every client of the agent, refused a standard conformance run.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import Principal
from accord.protocol.auth.anonymous import ANONYMOUS
from accord.protocol.settings import current

MAX_TRACKED: Final = 100_000


def rate_limited(message: str, retry_after_s: float, details: dict[str, object]) -> AccordError:
    return AccordError(
        ErrorCode.RATE_LIMITED, message, {**details, "retry_after_s": round(retry_after_s, 3)}
    )


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """Token buckets: ``rate`` per second, up to ``burst`` at once, per key."""

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, key: str) -> float | None:
        """Spend one request of ``key``: None when allowed, else seconds until one is."""
        if self.rate <= 0:
            return None
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
            self._buckets[key] = bucket
            if len(self._buckets) > MAX_TRACKED:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return None
        return (1 - bucket.tokens) / self.rate


class StreamSlots:
    """Open event streams per key, at most ``limit`` each."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}

    def acquire(self, key: str) -> bool:
        held = self._open.get(key, 0)
        if held >= self.limit:
            return False
        self._open[key] = held + 1
        return True

    def release(self, key: str) -> None:
        held = self._open.get(key, 0) - 1
        if held > 0:
            self._open[key] = held
        else:
            self._open.pop(key, None)

    def held(self, key: str) -> int:
        return self._open.get(key, 0)


class CallerLimits:
    """What the gate of one service enforces, from the settings."""

    def __init__(self) -> None:
        settings = current()
        self.people = RateLimiter(settings.rate_limit_per_s, settings.rate_limit_burst)
        service_rate = settings.service_rate_limit_per_s
        self.services = RateLimiter(service_rate, max(1, int(service_rate * 2)))
        self.streams = StreamSlots(settings.max_streams_per_principal)
        self.stream_idle_s = settings.stream_idle_s
        self.max_message_bytes = settings.max_message_bytes

    def limiter_of(self, principal: Principal) -> RateLimiter:
        """The bucket table ``principal`` spends from: a service's (also the anonymous caller,
        who is every client of an agent without authentication at once) or a person's."""
        return self.services if principal.is_service or principal == ANONYMOUS else self.people

    def admit(self, principal: Principal) -> None:
        """Spend one request of ``principal`` or raise RATE_LIMITED."""
        limiter = self.limiter_of(principal)
        wait = limiter.take(principal.owner)
        if wait is not None:
            raise rate_limited(
                f"too many requests: at most {limiter.rate:g} a second (burst {limiter.burst})",
                wait,
                {"limit_per_s": limiter.rate, "burst": limiter.burst},
            )

    def open_stream(self, principal: Principal) -> None:
        """Take one of the caller's stream slots (release with :meth:`close_stream`)."""
        if not self.streams.acquire(principal.owner):
            raise rate_limited(
                f"too many open streams: at most {self.streams.limit} per caller",
                1.0,
                {"max_streams": self.streams.limit},
            )

    def close_stream(self, principal: Principal) -> None:
        self.streams.release(principal.owner)
