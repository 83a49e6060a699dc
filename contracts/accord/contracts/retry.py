"""Retry semantics as a pure function: given an error and the attempts so far, what next?

`retry` errors back off exponentially with full jitter, within a bounded number of attempts
and an overall deadline; `replan` errors go back to planning; `stop` errors stop. The decision
never reads an error message.

A policy with ``max_attempts=None`` (:data:`UNTIL_DEADLINE`) counts no attempts: it retries
until the request's own deadline (the envelope's, passed as ``remaining_ms``) would pass. That
is how a durable workflow rides out a dependency that is down for many seconds (a restart),
where a fixed count given up after a second or two fails the customer.
"""

from __future__ import annotations

import random
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from accord.contracts.errors import REGISTRY, ErrorCode, RetryClass


class Action(StrEnum):
    RETRY = "retry"
    REPLAN = "replan"
    STOP = "stop"


class RetryPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int | None = Field(default=4, ge=1, le=100)  # None: until the deadline
    base_delay_ms: int = Field(default=100, ge=0)
    max_delay_ms: int = Field(default=5_000, ge=0)
    multiplier: float = Field(default=2.0, ge=1.0)
    deadline_ms: int | None = Field(default=30_000, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> RetryPolicy:
        if self.max_delay_ms < self.base_delay_ms:
            raise ValueError("max_delay_ms must be >= base_delay_ms")
        return self

    def backoff_cap_ms(self, attempt: int) -> int:
        """Upper bound of the delay after the ``attempt``-th failed attempt (1-based)."""
        # The exponent is capped: an unbounded policy may count thousands of attempts.
        raw = self.base_delay_ms * self.multiplier ** min(max(0, attempt - 1), 64)
        return int(min(self.max_delay_ms, raw))


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Action
    delay_ms: int = 0
    reason: str


NO_RETRY = RetryPolicy(max_attempts=1)
# Retry until the request's deadline (no count): the backoff grows to a few seconds, so a
# dependency that is down for a minute sees a dozen calls from each waiting workflow, not
# hundreds. The caller must pass ``remaining_ms`` (a policy without a bound is refused).
UNTIL_DEADLINE = RetryPolicy(
    max_attempts=None, base_delay_ms=200, max_delay_ms=4_000, deadline_ms=None
)


def decide(
    code: ErrorCode | str,
    attempt: int,
    elapsed_ms: int,
    policy: RetryPolicy = RetryPolicy(),  # noqa: B008 - frozen, shared default is safe
    rng: random.Random | None = None,
    *,
    remaining_ms: int | None = None,
) -> Decision:
    """What to do after attempt number ``attempt`` (1-based) failed with ``code``.

    ``elapsed_ms`` is the time since the first attempt started; ``remaining_ms`` is what is
    left of the request's deadline (None: the request has none). The delay uses full jitter
    (uniform in [0, cap]) so that many callers failing together do not retry together.
    """
    if attempt < 1:
        raise ValueError("attempt is 1-based")
    retry_class = REGISTRY[ErrorCode(code)].retry
    if retry_class is RetryClass.REPLAN:
        return Decision(action=Action.REPLAN, reason=f"{code} asks for another plan")
    if retry_class is RetryClass.STOP:
        return Decision(action=Action.STOP, reason=f"{code} cannot be retried")
    if policy.max_attempts is None and remaining_ms is None and policy.deadline_ms is None:
        raise ValueError("a policy without an attempt limit needs a deadline")
    if policy.max_attempts is not None and attempt >= policy.max_attempts:
        return Decision(action=Action.STOP, reason=f"{attempt} attempts made, the limit")
    delay = int((rng or random).uniform(0, policy.backoff_cap_ms(attempt)))
    if policy.deadline_ms is not None and elapsed_ms + delay >= policy.deadline_ms:
        return Decision(action=Action.STOP, reason="the retry deadline would pass")
    if remaining_ms is not None and delay >= remaining_ms:
        return Decision(action=Action.STOP, reason="the request's deadline would pass")
    return Decision(action=Action.RETRY, delay_ms=delay, reason=f"{code} is retryable")
