"""Per-caller limits on their own: token buckets and stream slots."""

from __future__ import annotations

from accord.protocol.auth import ROLE_CUSTOMER, Principal
from accord.protocol.auth.anonymous import ANONYMOUS
from accord.protocol.limits import CallerLimits, RateLimiter, StreamSlots


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_its_rate_and_says_how_long_to_wait() -> None:
    clock = Clock()
    limiter = RateLimiter(2.0, 3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [None, None, None]
    wait = limiter.take("a")
    assert wait is not None
    assert abs(wait - 0.5) < 1e-9
    assert limiter.take("b") is None  # another caller has its own bucket
    clock.now += 0.5
    assert limiter.take("a") is None
    assert limiter.take("a") is not None
    clock.now += 60
    assert [limiter.take("a") for _ in range(3)] == [None, None, None]  # never above the burst
    assert limiter.take("a") is not None


def test_a_rate_of_zero_is_no_limit() -> None:
    limiter = RateLimiter(0.0, 1)
    assert all(limiter.take("a") is None for _ in range(1000))


def test_stream_slots_are_per_caller_and_come_back() -> None:
    slots = StreamSlots(2)
    assert slots.acquire("a")
    assert slots.acquire("a")
    assert not slots.acquire("a")
    assert slots.acquire("b")
    slots.release("a")
    assert slots.held("a") == 1
    assert slots.acquire("a")
    slots.release("a")
    slots.release("a")
    assert slots.held("a") == 0


def test_the_anonymous_caller_spends_a_service_bucket_and_a_person_their_own() -> None:
    # Without authentication every client is the one anonymous principal: one person's rate,
    # shared by all of them, would refuse a standard client's test run.
    limits = CallerLimits()
    customer = Principal(subject="C-01", roles=frozenset({ROLE_CUSTOMER}))
    assert limits.limiter_of(ANONYMOUS) is limits.services
    assert limits.limiter_of(customer) is limits.people
    # A credential that merely names the subject "anonymous" is a person like any other.
    named = Principal(subject="anonymous", roles=frozenset({ROLE_CUSTOMER}), credential_id="j1")
    assert limits.limiter_of(named) is limits.people
