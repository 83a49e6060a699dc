"""The per-dependency circuit breaker: opens on retryable failures, refuses, half-opens."""

from __future__ import annotations

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.breaker import COOL_FIRST_S, FAILURES_TO_OPEN, Breaker, breaker, degraded

DOWN = AccordError(ErrorCode.UNAVAILABLE, "tool server 'payments' is unreachable")


def test_retryable_failures_in_a_row_open_it_and_calls_are_refused_at_once() -> None:
    b = Breaker("mcp:payments", "http://x")
    for _ in range(FAILURES_TO_OPEN - 1):
        b.record(DOWN, now=100.0)
        assert b.refuse(now=100.0) is None
    b.record(DOWN, now=100.0)
    refused = b.refuse(now=100.0)
    assert refused is not None
    assert refused.code is ErrorCode.UNAVAILABLE  # a retry-class error: callers back off
    assert 0 < refused.details["retry_after_ms"] <= COOL_FIRST_S * 1000 + 1
    assert b.refuse(now=100.0 + COOL_FIRST_S + 0.01) is None  # half-open: calls go through


def test_a_failure_when_half_open_opens_it_for_longer() -> None:
    b = Breaker("a2a:policy", "http://x")
    for _ in range(FAILURES_TO_OPEN):
        b.record(DOWN, now=0.0)
    first = b.open_until
    b.record(DOWN, now=first)  # the probe after the cool-down fails
    assert b.open_until - first > 0
    assert b.openings == 2


def test_success_or_a_refusal_closes_it() -> None:
    for outcome in (
        None,
        AccordError(ErrorCode.PERMISSION_DENIED, "no"),
        AccordError(ErrorCode.RATE_LIMITED, "the caller's own budget"),
    ):
        b = Breaker("mcp:commerce", "http://x")
        for _ in range(FAILURES_TO_OPEN):
            b.record(DOWN, now=0.0)
        b.record(outcome, now=0.0)  # the dependency answered: it is up
        assert b.refuse(now=0.0) is None
        assert b.openings == 0


def test_one_breaker_per_dependency_and_address_and_degraded_lists_the_open_ones() -> None:
    a = breaker("mcp:test-degraded", "http://127.0.0.1:1")
    assert breaker("mcp:test-degraded", "http://127.0.0.1:1") is a
    assert breaker("mcp:test-degraded", "http://127.0.0.1:2") is not a
    for _ in range(FAILURES_TO_OPEN):
        a.record(DOWN)
    assert "mcp:test-degraded" in degraded()
    a.record(None)
    assert "mcp:test-degraded" not in degraded()
