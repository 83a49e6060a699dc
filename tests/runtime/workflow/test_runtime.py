"""The runtime in one process, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import RetryPolicy
from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow import EventType, Graph, LogEvent, NodeContext, Route
from tests.runtime.workflow.appended import Appended
from tests.runtime.workflow.conftest import RuntimeFactory
from tests.support.clock import ManualClock

FAST_RETRY = RetryPolicy(max_attempts=3, base_delay_ms=1, max_delay_ms=5, deadline_ms=5_000)
# Backoffs of up to 10 s (and a 10 min retry deadline) on a clock the test moves: a test that
# slept through them would take 20 s, and one whose retries ignored the clock would not wait.
SLOW_RETRY = RetryPolicy(
    max_attempts=3, base_delay_ms=10_000, max_delay_ms=10_000, deadline_ms=600_000
)


async def types_of(runtime: Any, workflow_id: str) -> list[tuple[str, str | None]]:
    return [(e.type.value, e.node) for e in await runtime.log.read(workflow_id)]


async def test_fan_out_and_join(make_runtime: RuntimeFactory) -> None:
    order: list[str] = []
    d_done = asyncio.Event()

    async def node(ctx: NodeContext) -> Any:
        if ctx.node == "b":  # b finishes last: the join must wait for it
            await d_done.wait()
        order.append(ctx.node)
        if ctx.node == "d":
            d_done.set()
        return {"from": ctx.node, "inputs": sorted(ctx.inputs)}

    g = Graph("fan", "1")
    for name in "abcde":
        g.node(name, node)
    g.edge("a", "b", "c", "d").join(["b", "c", "d"], "e")
    runtime = await make_runtime(g)
    snap = await (await runtime.start("fan", "w1", {"n": 1})).settled(10)
    assert snap.status is Status.COMPLETED
    assert order[0] == "a"
    assert order[-1] == "e"
    assert order.index("b") > order.index("d")
    assert snap.result == {"e": {"from": "e", "inputs": ["b", "c", "d"]}}
    assert snap.outputs["a"] == {"from": "a", "inputs": []}
    kinds = await types_of(runtime, "w1")
    assert kinds[0] == ("workflow_started", None)
    assert kinds[-1] == ("workflow_finished", None)
    assert kinds.index(("node_started", "e")) > max(kinds.index(("node_output", n)) for n in "bcd")
    seqs = [e.seq for e in await runtime.log.read("w1")]
    assert seqs == list(range(1, len(seqs) + 1))


@pytest.mark.parametrize(("label", "expected"), [("refund", "refund"), ("odd", "explain")])
async def test_route_by_label_with_default(
    make_runtime: RuntimeFactory, label: str, expected: str
) -> None:
    async def decide(ctx: NodeContext) -> Any:
        return Route(ctx.input["label"], {"decided": ctx.input["label"]})

    async def leaf(ctx: NodeContext) -> Any:
        return {"leaf": ctx.node, "got": ctx.inputs["decide"]}

    g = Graph("route", "1").node("decide", decide).node("refund", leaf).node("explain", leaf)
    g.route("decide", {"refund": "refund", "approve": "refund"}, default="explain")
    runtime = await make_runtime(g)
    snap = await (await runtime.start("route", "w", {"label": label})).settled(10)
    assert snap.result == {expected: {"leaf": expected, "got": {"decided": label}}}
    assert set(snap.outputs) == {"decide", expected}


async def test_retry_class_retry_is_retried(make_runtime: RuntimeFactory) -> None:
    attempts: list[int] = []

    async def flaky(ctx: NodeContext) -> Any:
        attempts.append(ctx.attempt)
        if ctx.attempt < 3:
            raise AccordError(ErrorCode.RETRYABLE_TIMEOUT)
        return "ok"

    clock = ManualClock()
    g = Graph("retry", "1").node("flaky", flaky, retry=SLOW_RETRY)
    runtime = await make_runtime(g, clock=clock)
    appended = Appended(runtime)
    handle = await runtime.start("retry", "w")
    for attempt in (1, 2):
        failed = await appended.next(EventType.NODE_FAILED)
        assert failed.data["attempt"] == attempt
        assert 0 <= failed.data["retry_in_ms"] <= 10_000
        if failed.data["retry_in_ms"] > 0:  # (full jitter may pick 0: then it runs at once)
            assert attempts == [1, 2][:attempt]  # the next attempt waits for the clock
        await clock.advance(failed.data["retry_in_ms"] / 1000)  # exactly the backoff
    snap = await handle.settled(10)
    assert snap.status is Status.COMPLETED
    assert attempts == [1, 2, 3]
    failed_events = [e for e in await runtime.log.read("w") if e.type is EventType.NODE_FAILED]
    assert [e.data["attempt"] for e in failed_events] == [1, 2]
    assert all(e.data["error"]["code"] == "RETRYABLE_TIMEOUT" for e in failed_events)


async def test_stop_class_is_not_retried(make_runtime: RuntimeFactory) -> None:
    attempts: list[int] = []

    async def denied(ctx: NodeContext) -> Any:
        attempts.append(ctx.attempt)
        raise AccordError(ErrorCode.POLICY_DENIED, "not refundable")

    runtime = await make_runtime(Graph("deny", "1").node("check", denied, retry=FAST_RETRY))
    snap = await (await runtime.start("deny", "w")).settled(10)
    assert attempts == [1]
    assert snap.status is Status.FAILED
    assert snap.error is not None
    assert snap.error.code is ErrorCode.POLICY_DENIED
    last = (await runtime.log.read("w"))[-1]
    assert last.type is EventType.WORKFLOW_FINISHED
    assert last.data["status"] == "failed"


async def test_retries_run_out(make_runtime: RuntimeFactory) -> None:
    async def down(ctx: NodeContext) -> Any:
        raise AccordError(ErrorCode.UNAVAILABLE)

    clock = ManualClock()
    runtime = await make_runtime(Graph("down", "1").node("n", down, retry=SLOW_RETRY), clock=clock)
    appended = Appended(runtime)
    handle = await runtime.start("down", "w")
    for _ in range(2):
        backing_off = await appended.next(EventType.NODE_FAILED)
        await clock.advance(backing_off.data["retry_in_ms"] / 1000)
    snap = await handle.settled(10)
    assert snap.status is Status.FAILED
    assert snap.error is not None
    assert snap.error.code is ErrorCode.UNAVAILABLE
    failed = [e.data for e in await runtime.log.read("w") if e.type is EventType.NODE_FAILED]
    assert [d["attempt"] for d in failed] == [1, 2, 3]
    assert failed[-1]["final"] is True


async def test_replan_goes_to_the_error_path(make_runtime: RuntimeFactory) -> None:
    async def order(ctx: NodeContext) -> Any:
        raise AccordError(ErrorCode.OUT_OF_STOCK, "gone")

    async def fallback(ctx: NodeContext) -> Any:
        assert ctx.error is not None
        return {"because": ctx.error.code.value}

    g = Graph("replan", "1").node("order", order, retry=FAST_RETRY, on_error="fallback")
    g.node("fallback", fallback)
    runtime = await make_runtime(g)
    snap = await (await runtime.start("replan", "w")).settled(10)
    assert snap.status is Status.COMPLETED
    assert snap.result == {"fallback": {"because": "OUT_OF_STOCK"}}


async def test_node_timeout(make_runtime: RuntimeFactory) -> None:
    never = asyncio.Event()
    running = asyncio.Event()

    async def slow(ctx: NodeContext) -> Any:
        running.set()
        await never.wait()

    clock = ManualClock()
    runtime = await make_runtime(Graph("slow", "1").node("n", slow, timeout_s=30), clock=clock)
    handle = await runtime.start("slow", "w")
    await asyncio.wait_for(running.wait(), 10)
    await clock.advance(30)  # a node that ignored the clock would outlast settled(10)
    snap = await handle.settled(10)
    assert snap.status is Status.FAILED
    assert snap.error is not None
    assert snap.error.code is ErrorCode.RETRYABLE_TIMEOUT
    assert snap.error.details["timeout_s"] == 30


async def test_unexpected_exception_is_internal(make_runtime: RuntimeFactory) -> None:
    async def broken(ctx: NodeContext) -> Any:
        raise KeyError("secret detail")

    runtime = await make_runtime(Graph("broken", "1").node("n", broken))
    snap = await (await runtime.start("broken", "w")).settled(10)
    assert snap.error is not None
    assert snap.error.code is ErrorCode.INTERNAL
    assert "secret" not in snap.error.message


def approval_graph(version: str = "1", calls: list[str] | None = None) -> Graph:
    async def intake(ctx: NodeContext) -> Any:
        return {"order": ctx.input["order"]}

    async def approve(ctx: NodeContext) -> Any:
        if calls is not None:
            calls.append(f"v{version}")
        info = ctx.interrupt(WaitingReason.INPUT, {"ask": "which item?"})
        answer = ctx.interrupt(WaitingReason.APPROVAL, {"ask": "approve?", "item": info.value})
        return Route(
            "yes" if answer.value == "approve" else "no",
            {"item": info.value, "by": answer.principal, "v": version},
        )

    async def leaf(ctx: NodeContext) -> Any:
        return ctx.inputs["approve"]

    g = Graph("approval", version).node("intake", intake).node("approve", approve)
    g.node("refund", leaf).node("reject", leaf)
    g.edge("intake", "approve").route("approve", {"yes": "refund"}, default="reject")
    return g


async def test_interrupts_and_resume(make_runtime: RuntimeFactory) -> None:
    calls: list[str] = []
    runtime = await make_runtime(approval_graph(calls=calls))
    first = await (await runtime.start("approval", "w1", {"order": "o1"})).settled(10)
    other = await (await runtime.start("approval", "w2", {"order": "o2"})).settled(10)
    assert first.status is Status.WAITING
    assert len(first.interrupts) == 1
    ask = first.interrupts[0]
    assert ask.reason is WaitingReason.INPUT
    assert ask.payload == {"ask": "which item?"}
    assert ask.interrupt_id != other.interrupts[0].interrupt_id
    assert not runtime.holds("w1")  # a waiting workflow holds no memory

    with pytest.raises(AccordError) as caught:
        await runtime.resume("w1", "not-an-interrupt", "x", "u:1")
    assert caught.value.code is ErrorCode.NOT_FOUND

    second = await (await runtime.resume("w1", ask.interrupt_id, "shoes", "u:1")).settled(10)
    assert second.status is Status.WAITING
    approval = second.interrupts[0]
    assert approval.reason is WaitingReason.APPROVAL
    assert approval.payload == {"ask": "approve?", "item": "shoes"}
    assert approval.interrupt_id != ask.interrupt_id

    with pytest.raises(AccordError) as caught:  # answered already
        await runtime.resume("w1", ask.interrupt_id, "again", "u:1")
    assert caught.value.code is ErrorCode.NOT_FOUND

    done = await (await runtime.resume("w1", approval.interrupt_id, "approve", "boss")).settled(10)
    assert done.status is Status.COMPLETED
    assert done.result == {"refund": {"item": "shoes", "by": "boss", "v": "1"}}
    assert calls == ["v1", "v1", "v1", "v1"]  # w1 three times, w2 once
    resumed = [e.data for e in await runtime.log.read("w1") if e.type is EventType.RESUMED]
    assert [(d["value"], d["principal"]) for d in resumed] == [
        ("shoes", "u:1"),
        ("approve", "boss"),
    ]
    with pytest.raises(AccordError) as caught:
        await runtime.resume("w1", approval.interrupt_id, "x", "boss")
    assert caught.value.code is ErrorCode.UNSUPPORTED_OPERATION


async def test_resume_after_restart(make_runtime: RuntimeFactory) -> None:
    first = await make_runtime(approval_graph())
    snap = await (await first.start("approval", "w", {"order": "o"})).settled(10)
    await first.close()
    second = await make_runtime(approval_graph())
    snap = await (await second.resume("w", snap.interrupts[0].interrupt_id, "hat")).settled(10)
    snap = await (await second.resume("w", snap.interrupts[0].interrupt_id, "no")).settled(10)
    assert snap.result == {"reject": {"item": "hat", "by": None, "v": "1"}}
    started = [e.node for e in await second.log.read("w") if e.type is EventType.NODE_STARTED]
    assert started.count("intake") == 1  # finished nodes never run again


async def test_idempotent_start(make_runtime: RuntimeFactory) -> None:
    runs: list[str] = []

    async def once(ctx: NodeContext) -> Any:
        runs.append(ctx.workflow_id)
        return "done"

    g = Graph("once", "1").node("n", once)
    runtime = await make_runtime(g)
    handles = await asyncio.gather(*(runtime.start("once", "same", {"a": 1}) for _ in range(3)))
    for handle in handles:
        assert (await handle.settled(10)).status is Status.COMPLETED
    other = await make_runtime(g)  # another process (replica) starting the same id
    assert (await (await other.start("once", "same", {"a": 1})).settled(10)).status is (
        Status.COMPLETED
    )
    assert runs == ["same"]
    started = [e for e in await runtime.log.read("same") if e.type is EventType.WORKFLOW_STARTED]
    assert len(started) == 1
    with pytest.raises(AccordError) as caught:
        await other.start("once", "same", {"a": 2})
    assert caught.value.code is ErrorCode.IDEMPOTENCY_CONFLICT


async def test_cancel_running_workflow(make_runtime: RuntimeFactory) -> None:
    started = asyncio.Event()
    hooked: list[str] = []
    interrupted: list[str] = []
    never = asyncio.Event()

    async def quick(ctx: NodeContext) -> Any:
        return "ok"

    async def child(ctx: NodeContext) -> Any:
        ctx.state["child_task"] = f"task-{ctx.node}"
        started.set()
        try:
            await never.wait()
        except asyncio.CancelledError:
            interrupted.append(ctx.node)
            raise

    async def on_cancel(ctx: NodeContext) -> None:
        hooked.append(ctx.state["child_task"])

    g = Graph("cancel", "1").node("a", quick).node("b", child, on_cancel=on_cancel)
    g.node("c", quick).edge("a", "b", "c")
    runtime = await make_runtime(g)
    seen: list[LogEvent] = []

    async def observe(event: LogEvent) -> None:
        seen.append(event)

    runtime.subscribe(observe, "w")
    handle = await runtime.start("cancel", "w")
    await asyncio.wait_for(started.wait(), 10)
    await runtime.cancel("w", principal="u:1", reason="changed my mind")
    snap = await handle.settled(10)
    assert snap.status is Status.FAILED
    assert snap.error is not None
    assert snap.error.code is ErrorCode.CANCELED
    assert interrupted == ["b"]
    assert hooked == ["task-b"]
    events = await runtime.log.read("w")
    assert events[-1].type is EventType.CANCELED
    assert events[-1].data == {"principal": "u:1", "reason": "changed my mind"}
    assert [e.seq for e in seen] == [e.seq for e in events]  # observers saw every event
    with pytest.raises(AccordError) as caught:
        await runtime.cancel("w")
    assert caught.value.code is ErrorCode.TASK_NOT_CANCELABLE
    from accord.runtime.workflow import NewEvent, WorkflowClosedError

    with pytest.raises(WorkflowClosedError):  # the append path refuses anything after it
        await runtime.log.append(
            "w", events[-1].seq, [NewEvent(EventType.NODE_OUTPUT, "b", {"output": 1})]
        )


async def test_cancel_waiting_workflow_calls_hook(make_runtime: RuntimeFactory) -> None:
    hooked: list[str] = []

    async def ask(ctx: NodeContext) -> Any:
        return ctx.interrupt(WaitingReason.APPROVAL, {"q": 1}).value

    async def on_cancel(ctx: NodeContext) -> None:
        hooked.append(ctx.node)

    runtime = await make_runtime(Graph("wait", "1").node("ask", ask, on_cancel=on_cancel))
    snap = await (await runtime.start("wait", "w")).settled(10)
    assert snap.status is Status.WAITING
    await runtime.cancel("w")
    assert hooked == ["ask"]
    after = await runtime.snapshot("w")
    assert after.status is Status.FAILED
    assert after.error is not None
    assert after.error.code is ErrorCode.CANCELED
    with pytest.raises(AccordError) as caught:
        await runtime.resume("w", snap.interrupts[0].interrupt_id, "yes")
    assert caught.value.code is ErrorCode.UNSUPPORTED_OPERATION


async def test_optimistic_version_conflict(make_runtime: RuntimeFactory) -> None:
    from accord.runtime.workflow import NewEvent, VersionConflictError

    runtime = await make_runtime()
    log = runtime.log
    start = NewEvent(EventType.WORKFLOW_STARTED, None, {"graph": "g", "version": "1"})
    step = NewEvent(EventType.NODE_STARTED, "a", {"attempt": 1})
    appended = await log.append("w", 0, [start, step])
    assert [e.seq for e in appended] == [1, 2]
    with pytest.raises(VersionConflictError):
        await log.append("w", 0, [start])
    results = await asyncio.gather(
        log.append("w", 2, [step]), log.append("w", 2, [step]), return_exceptions=True
    )
    assert sum(isinstance(r, VersionConflictError) for r in results) == 1
    with pytest.raises(VersionConflictError) as caught:
        await log.append("w", 5, [step])
    assert caught.value.code is ErrorCode.UNAVAILABLE
    assert [e.seq for e in await log.read("w")] == [1, 2, 3]
    record = await log.record("w")
    assert record is not None
    assert record.version == 3
    assert record.graph_key == "g@1"


async def test_version_is_recorded_and_checked(make_runtime: RuntimeFactory) -> None:
    calls: list[str] = []
    old = await make_runtime(approval_graph("1", calls))
    snap = await (await old.start("approval", "w", {"order": "o"})).settled(10)
    await old.close()

    upgraded = await make_runtime(approval_graph("2", calls))  # v1 no longer registered
    with pytest.raises(AccordError) as caught:
        await upgraded.resume("w", snap.interrupts[0].interrupt_id, "hat")
    assert caught.value.code is ErrorCode.VERSION_UNSUPPORTED
    with pytest.raises(AccordError) as caught:
        await upgraded.start("approval", "x", {"order": "o"}, version="1")
    assert caught.value.code is ErrorCode.VERSION_UNSUPPORTED

    both = await make_runtime(approval_graph("1", calls), approval_graph("2", calls))
    snap = await (await both.resume("w", snap.interrupts[0].interrupt_id, "hat")).settled(10)
    assert calls == ["v1", "v1"]  # resumed on the version it started with
    fresh = await (await both.start("approval", "new", {"order": "o"})).settled(10)
    assert calls[-1] == "v2"  # new work starts on the latest version
    started = (await both.log.read("new"))[0]
    assert started.data["graph"] == "approval"
    assert started.data["version"] == "2"
    assert fresh.status is Status.WAITING


async def test_interrupt_timer_fires(make_runtime: RuntimeFactory) -> None:
    async def ask(ctx: NodeContext) -> Any:
        try:
            ctx.interrupt(WaitingReason.APPROVAL, {"q": 1}, timeout_s=60)
        except AccordError as error:
            return Route("expired", error.code.value)
        return Route("answered")

    async def leaf(ctx: NodeContext) -> Any:
        return ctx.node

    g = Graph("timer", "1").node("ask", ask).node("expired", leaf).node("answered", leaf)
    g.route("ask", {"expired": "expired"}, default="answered")
    clock = ManualClock()
    # The rescan is an hour away: only the timer this process set can wake the scheduler.
    runtime = await make_runtime(g, timer_rescan_s=3600, clock=clock)
    appended = Appended(runtime)
    snap = await (await runtime.start("timer", "w")).settled(10)
    assert snap.status is Status.WAITING
    assert snap.interrupts[0].due_at == clock.now() + 60
    await clock.advance(60)
    await appended.next(EventType.WORKFLOW_FINISHED)
    final = await runtime.snapshot("w")
    assert final.result == {"expired": "expired"}
    assert final.outputs["ask"] == "RETRYABLE_TIMEOUT"
    kinds = [e.type for e in await runtime.log.read("w")]
    assert kinds.count(EventType.TIMER_SET) == 1
    assert kinds.count(EventType.TIMER_FIRED) == 1
    assert await runtime.log.next_timer() is None


async def test_resume_before_timeout_clears_timer(make_runtime: RuntimeFactory) -> None:
    async def ask(ctx: NodeContext) -> Any:
        return ctx.interrupt(WaitingReason.APPROVAL, None, timeout_s=300).value

    runtime = await make_runtime(Graph("t", "1").node("ask", ask))
    snap = await (await runtime.start("t", "w")).settled(10)
    timer = await runtime.log.next_timer()
    assert timer is not None
    assert timer.workflow_id == "w"
    done = await (await runtime.resume("w", snap.interrupts[0].interrupt_id, "ok")).settled(10)
    assert done.result == {"ask": "ok"}
    assert await runtime.log.next_timer() is None


async def test_bad_input_is_invalid(make_runtime: RuntimeFactory) -> None:
    async def n(ctx: NodeContext) -> Any:
        return object()  # not JSON

    runtime = await make_runtime(Graph("bad", "1").node("n", n))
    with pytest.raises(AccordError) as caught:
        await runtime.start("bad", "w", {"x": object()})
    assert caught.value.code is ErrorCode.INVALID_INPUT
    snap = await (await runtime.start("bad", "w2")).settled(10)
    assert snap.error is not None
    assert snap.error.code is ErrorCode.CONTRACT_VIOLATION
    with pytest.raises(AccordError) as caught:
        await runtime.start("nope", "w3")
    assert caught.value.code is ErrorCode.VERSION_UNSUPPORTED


async def test_cancel_during_retry_backoff(make_runtime: RuntimeFactory) -> None:
    failed = asyncio.Event()
    never = asyncio.Event()
    slow_retry = RetryPolicy(
        max_attempts=3, base_delay_ms=10_000, max_delay_ms=10_000, deadline_ms=60_000
    )

    async def flaky(ctx: NodeContext) -> Any:
        if ctx.attempt == 1:
            failed.set()
            raise AccordError(ErrorCode.UNAVAILABLE)
        await never.wait()

    runtime = await make_runtime(Graph("backoff", "1").node("n", flaky, retry=slow_retry))
    handle = await runtime.start("backoff", "w")
    await asyncio.wait_for(failed.wait(), 10)
    await runtime.cancel("w")
    snap = await handle.settled(5)  # the runner closed: no retry timer keeps it alive
    assert snap.error is not None
    assert snap.error.code is ErrorCode.CANCELED
    assert not runtime.holds("w")


async def test_a_typed_output_is_logged_as_json(make_runtime: RuntimeFactory) -> None:
    class Found(BaseModel):
        order_id: str
        cents: int

    async def look(ctx: NodeContext) -> Any:
        return Route("found", Found(order_id="O-1", cents=5))

    async def use(ctx: NodeContext) -> Any:
        found = Found.model_validate(ctx.outputs["look"])  # read back as the model
        return found.model_copy(update={"cents": found.cents * 2})

    g = Graph("typed", "1").node("look", look).node("use", use).node("other", use)
    g.route("look", {"found": "use"}, default="other")
    runtime = await make_runtime(g)
    snap = await (await runtime.start("typed", "w")).settled(10)
    assert snap.result == {"use": {"order_id": "O-1", "cents": 10}}
    outputs = [e.data for e in await runtime.log.read("w") if e.type is EventType.NODE_OUTPUT]
    assert outputs == [
        {"output": {"order_id": "O-1", "cents": 5}, "label": "found"},
        {"output": {"order_id": "O-1", "cents": 10}, "label": None},
    ]
