"""Waiting costs nothing: no task, no memory and no wake-up per waiting workflow; timers are
one durable "next due" sleep, never a poll (docs/workflow.md "Waiting costs nothing")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow import EventType, Graph, NodeContext, Route
from tests.runtime.workflow.appended import Appended
from tests.runtime.workflow.conftest import RuntimeFactory
from tests.support.clock import ManualClock

WAITING = 200
DAY_S = 86_400.0
TTL_S = 3_600.0  # heartbeats every 1,200 s: far from anything a poll would do


def approval_graph() -> Graph:
    async def ask(ctx: NodeContext) -> Any:
        try:
            return ctx.interrupt(WaitingReason.APPROVAL, {"n": 1}, timeout_s=DAY_S).value
        except AccordError as error:  # nobody answered in time
            return Route("expired", error.code.value)

    async def leaf(ctx: NodeContext) -> Any:
        return ctx.node

    g = Graph("wait", "1").node("ask", ask).node("expired", leaf)
    g.route("ask", {"expired": "expired"}, default="expired")
    return g


async def test_waiting_workflows_keep_no_task_and_wake_nothing(
    make_runtime: RuntimeFactory,
) -> None:
    clock = ManualClock()
    opened_at = clock.now()
    runtime = await make_runtime(approval_graph(), clock=clock, lease_ttl_s=TTL_S)
    tasks_before = asyncio.all_tasks()

    handles = await asyncio.gather(*(runtime.start("wait", f"w{i}") for i in range(WAITING)))
    snapshots = await asyncio.gather(*(h.settled(30) for h in handles))
    assert {s.status for s in snapshots} == {Status.WAITING}

    # Nothing of them in memory: no execution, no asyncio task.
    assert not any(runtime.holds(f"w{i}") for i in range(WAITING))
    extra = asyncio.all_tasks() - tasks_before - {asyncio.current_task()}
    if extra:  # the executions' tasks end as their workflows settle
        _, running = await asyncio.wait(extra, timeout=10)
        assert not running, running
    # On the clock: the heartbeat, and the scheduler's one sleep until the earliest deadline
    # (armed by the timers just written). Not a call per workflow, and no rescan before the
    # heartbeat: the first thing due is the heartbeat itself.
    await clock.until(lambda: clock.waiting == 2)
    assert clock.next_due() == opened_at + TTL_S / 3
    assert await runtime.log.next_timer() is not None


async def test_an_idle_runtime_without_timers_sleeps_on_nothing_but_its_heartbeat(
    make_runtime: RuntimeFactory,
) -> None:
    clock = ManualClock()
    runtime = await make_runtime(approval_graph(), clock=clock, lease_ttl_s=TTL_S)
    # One workflow that ends: the scheduler looked (no timer left) and sleeps until woken.
    appended = Appended(runtime)
    await (await runtime.start("wait", "w")).settled(10)
    await clock.advance(DAY_S)  # its deadline: fired, and it finishes
    await appended.next(EventType.WORKFLOW_FINISHED)
    assert await runtime.log.next_timer() is None
    # The one thing on the clock is the next heartbeat (a rescan would be due in seconds).
    await clock.until(lambda: clock.waiting == 1 and clock.next_due() == clock.now() + TTL_S / 3)


async def test_a_timer_another_runtime_set_fires_after_the_next_heartbeat(
    make_runtime: RuntimeFactory,
) -> None:
    clock = ManualClock()
    graph = approval_graph()
    survivor = await make_runtime(graph, clock=clock, lease_ttl_s=30.0, owner="survivor")
    appended = Appended(survivor)
    gone = await make_runtime(graph, clock=clock, lease_ttl_s=30.0, owner="gone")
    snap = await (await gone.start("wait", "w")).settled(10)
    assert snap.status is Status.WAITING
    await gone.close()  # the replica that set the timer is gone; only the log knows it

    await clock.advance(DAY_S + 1)  # past the deadline, and many heartbeats of the survivor
    await appended.next(EventType.TIMER_FIRED)
    await appended.next(EventType.WORKFLOW_FINISHED)
    final = await survivor.snapshot("w")
    assert final.result == {"expired": "expired"}


async def test_an_answer_after_the_timeout_is_refused_even_before_the_timer_fires(
    make_runtime: RuntimeFactory,
) -> None:
    """ENV-009: the timeout bounds the wait, not the scheduler's next look. An answer that
    comes when the timer is due but has not fired is refused, and the timeout takes effect."""
    clock = ManualClock()
    runtime = await make_runtime(approval_graph(), clock=clock, lease_ttl_s=TTL_S)
    waiting = await (await runtime.start("wait", "late")).settled(30)
    assert waiting.status is Status.WAITING
    (pending,) = waiting.interrupts
    # Due, and the scheduler has not run yet; if it fires first, the refusal is the same and
    # says so too (WorkflowState.expired), as long as the workflow has not finished.
    clock.jump(DAY_S + 1)
    with pytest.raises(AccordError) as refused:
        await runtime.resume("late", pending.interrupt_id, {"approved": True})
    assert refused.value.code is ErrorCode.NOT_FOUND
    assert refused.value.details.get("timed_out") is True
    ended = await runtime.handle("late").settled(30)
    assert ended.status is Status.COMPLETED
    assert ended.result == {"expired": "expired"}, ended.result  # the timeout's route
