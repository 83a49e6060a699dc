"""Node retries bounded by the request's deadline, not by a count; their schedule is logged."""

from __future__ import annotations

from typing import Any

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import UNTIL_DEADLINE
from accord.contracts.status import Status
from accord.runtime.workflow import EventType, Graph, NodeContext
from tests.runtime.workflow.appended import Appended
from tests.runtime.workflow.conftest import RuntimeFactory
from tests.support.clock import ManualClock


def _deadline(raw: Any) -> float | None:
    return float(raw["deadline"]) if isinstance(raw, dict) and "deadline" in raw else None


def _graph(fn: Any) -> Graph:
    return Graph("patient", "1", deadline_of=_deadline).node("call", fn, retry=UNTIL_DEADLINE)


async def test_a_dependency_down_for_many_attempts_is_waited_out(
    make_runtime: RuntimeFactory,
) -> None:
    attempts: list[int] = []

    async def down_for_a_while(ctx: NodeContext) -> Any:
        attempts.append(ctx.attempt)
        if ctx.attempt <= 12:  # three times the old fixed count
            raise AccordError(ErrorCode.UNAVAILABLE, "tool server 'payments' is unreachable")
        return "ok"

    clock = ManualClock()
    runtime = await make_runtime(_graph(down_for_a_while), clock=clock)
    appended = Appended(runtime)
    handle = await runtime.start("patient", "w", {"deadline": clock.now() + 600})
    for attempt in range(1, 13):
        failed = await appended.next(EventType.NODE_FAILED)
        assert failed.data["attempt"] == attempt
        assert "final" not in failed.data
        assert failed.data["retry_at"] == clock.now() + failed.data["retry_in_ms"] / 1000
        await clock.advance(failed.data["retry_in_ms"] / 1000)
    snap = await handle.settled(10)
    assert snap.status is Status.COMPLETED
    assert attempts == list(range(1, 14))


async def test_retries_stop_at_the_deadline(make_runtime: RuntimeFactory) -> None:
    async def down(ctx: NodeContext) -> Any:
        raise AccordError(ErrorCode.RETRYABLE_TIMEOUT)

    clock = ManualClock()
    runtime = await make_runtime(_graph(down), clock=clock)
    appended = Appended(runtime)
    deadline = clock.now() + 30
    handle = await runtime.start("patient", "w", {"deadline": deadline})
    while True:
        failed = await appended.next(EventType.NODE_FAILED)
        if failed.data.get("final"):
            break
        assert failed.data["retry_at"] < deadline  # never scheduled past the deadline
        await clock.advance(failed.data["retry_in_ms"] / 1000)
    snap = await handle.settled(10)
    assert snap.status is Status.FAILED
    assert snap.error is not None
    assert snap.error.code is ErrorCode.RETRYABLE_TIMEOUT
    assert failed.data["attempt"] > 4  # more than a fixed count would have allowed
    assert clock.now() <= deadline


async def test_a_stop_error_is_not_retried_even_with_time_left(
    make_runtime: RuntimeFactory,
) -> None:
    attempts: list[int] = []

    async def denied(ctx: NodeContext) -> Any:
        attempts.append(ctx.attempt)
        raise AccordError(ErrorCode.PERMISSION_DENIED)

    clock = ManualClock()
    runtime = await make_runtime(_graph(denied), clock=clock)
    snap = await (await runtime.start("patient", "w", {"deadline": clock.now() + 600})).settled(10)
    assert snap.status is Status.FAILED
    assert attempts == [1]


async def test_a_restart_keeps_the_backoff_schedule(make_runtime: RuntimeFactory) -> None:
    """The retry is due when the log says, on its attempt number: a restart neither runs it
    early (hammering the dependency) nor starts the count again."""
    attempts: list[int] = []
    failing = {"through": 1}  # the attempts that fail: one, or more while jitter picks ~0

    async def down_once(ctx: NodeContext) -> Any:
        attempts.append(ctx.attempt)
        if ctx.attempt <= failing["through"]:
            raise AccordError(ErrorCode.UNAVAILABLE)
        return "ok"

    clock = ManualClock()
    first = await make_runtime(_graph(down_once), clock=clock)
    appended = Appended(first)
    await first.start("patient", "w", {"deadline": clock.now() + 600})
    failed = await appended.next(EventType.NODE_FAILED)
    retry_at = failed.data["retry_at"]
    while retry_at - clock.now() < 0.01:  # full jitter may pick ~0: fail again for a real wait
        failing["through"] += 1  # (the next attempt must fail, or no node_failed follows)
        await clock.advance(failed.data["retry_in_ms"] / 1000)
        failed = await appended.next(EventType.NODE_FAILED)
        retry_at = failed.data["retry_at"]
    await first.close()  # the process goes away with the retry pending
    before = len(attempts)

    second = await make_runtime(_graph(down_once), clock=clock)
    appended = Appended(second)
    await second.log.drop_owner(first.owner)  # (as the orchestrator does for its own past)
    assert await second.recover() == ["w"]
    await clock.advance(max(0.0, (retry_at - clock.now()) / 2))
    with pytest.raises(TimeoutError):  # not early: nothing starts before the logged time
        await appended.next(EventType.NODE_STARTED, timeout_s=0.5)
    await clock.advance(retry_at - clock.now())
    started = await appended.next(EventType.NODE_STARTED)
    assert started.data["attempt"] == before + 1  # the count went on
    snap = await second.handle("w").settled(10)
    assert snap.status is Status.COMPLETED
    assert len(attempts) == before + 1


async def test_a_retry_due_while_the_process_was_down_runs_at_once(
    make_runtime: RuntimeFactory,
) -> None:
    attempts: list[int] = []
    down = {"now": True}  # down while the first process lives: full jitter may pick a ~0 wait,
    # and a retry it ran before close would race the close (at-least-once, so a third run)

    async def down_until_restart(ctx: NodeContext) -> Any:
        attempts.append(ctx.attempt)
        if down["now"]:
            raise AccordError(ErrorCode.UNAVAILABLE)
        return "ok"

    clock = ManualClock()
    first = await make_runtime(_graph(down_until_restart), clock=clock)
    appended = Appended(first)
    await first.start("patient", "w", {"deadline": clock.now() + 600})
    failed = await appended.next(EventType.NODE_FAILED)
    await first.close()
    before = len(attempts)
    down["now"] = False
    await clock.advance(failed.data["retry_in_ms"] / 1000 + 1)  # due while nobody ran it

    second = await make_runtime(_graph(down_until_restart), clock=clock)
    await second.log.drop_owner(first.owner)
    await second.recover()
    snap = await second.handle("w").settled(10)  # the clock does not move: it ran at once
    assert snap.status is Status.COMPLETED
    assert len(attempts) == before + 1  # one more attempt, at once
    assert attempts[-1] > 1  # and the count went on
