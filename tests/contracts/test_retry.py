from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from accord.contracts import REGISTRY, Action, ErrorCode, RetryClass, RetryPolicy, decide

RETRYABLE = [c for c, s in REGISTRY.items() if s.retry is RetryClass.RETRY]


@pytest.mark.parametrize("code", list(ErrorCode))
def test_decision_follows_the_retry_class(code: ErrorCode) -> None:
    decision = decide(code, attempt=1, elapsed_ms=0, rng=random.Random(1))
    expected = {
        RetryClass.RETRY: Action.RETRY,
        RetryClass.REPLAN: Action.REPLAN,
        RetryClass.STOP: Action.STOP,
    }[REGISTRY[code].retry]
    assert decision.action is expected


@given(
    st.sampled_from(RETRYABLE),
    st.integers(min_value=1, max_value=20),
    st.integers(min_value=0, max_value=2**31),
)
def test_backoff_is_jittered_within_the_exponential_cap(
    code: ErrorCode, attempt: int, seed: int
) -> None:
    policy = RetryPolicy(max_attempts=50, base_delay_ms=100, max_delay_ms=3000, deadline_ms=None)
    decision = decide(code, attempt, 0, policy, random.Random(seed))
    assert decision.action is Action.RETRY
    cap = min(3000, 100 * 2 ** (attempt - 1))
    assert 0 <= decision.delay_ms <= cap


def test_attempts_are_bounded() -> None:
    policy = RetryPolicy(max_attempts=3)
    assert decide("UNAVAILABLE", 2, 0, policy).action is Action.RETRY
    final = decide("UNAVAILABLE", 3, 0, policy)
    assert final.action is Action.STOP


def test_overall_deadline_stops_retries() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay_ms=100, deadline_ms=1000)
    assert decide("RETRYABLE_TIMEOUT", 1, 999, policy, random.Random(3)).action is Action.STOP
    assert decide("RETRYABLE_TIMEOUT", 1, 0, policy, random.Random(3)).action is Action.RETRY


def test_full_jitter_spreads_delays() -> None:
    rng = random.Random(7)
    policy = RetryPolicy(base_delay_ms=1000, max_delay_ms=1000)
    delays = {decide("RATE_LIMITED", 1, 0, policy, rng).delay_ms for _ in range(50)}
    assert len(delays) > 10


def test_policy_bounds_are_validated() -> None:
    with pytest.raises(ValidationError):
        RetryPolicy(base_delay_ms=500, max_delay_ms=100)
    with pytest.raises(ValueError, match="1-based"):
        decide("UNAVAILABLE", 0, 0)
