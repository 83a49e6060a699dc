"""Per-caller limits on their own: token buckets and stream slots."""

from __future__ import annotations

from accord.protocol.limits import RateLimiter, StreamSlots


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
