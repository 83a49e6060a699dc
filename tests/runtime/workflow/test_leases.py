"""Leases: a dead owner's workflows are taken over by exactly one of two recoverers.

Two runtimes in this process, each with its own connection pool (on PostgreSQL: two
independent clients of the database), race to recover workflows whose owner was a real
process killed with SIGKILL.

Lease expiry is judged by the database's clock, which a test cannot move: these tests declare
the dead owner dead with `drop_owner` (as an operator, or the owner's own restart, does)
instead of waiting out its TTL. Waiting out a real TTL is covered by the crash-recovery tests,
whose recovering process retries until the lease expires.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.runtime.workflow import EventType, Graph, NodeContext, Runtime
from tests.runtime.workflow.appended import Appended
from tests.runtime.workflow.conftest import RuntimeFactory
from tests.runtime.workflow.crash_worker import Effects, build
from tests.runtime.workflow.harness import IDS, Harness
from tests.support.clock import ManualClock


async def test_exactly_one_recoverer_takes_each_orphan(log_url: str, tmp_path: Path) -> None:
    harness = Harness(log_url, tmp_path)
    try:
        proc = harness.spawn("start", "--block", "b")
        harness.wait_for(
            lambda: (
                harness.observed("node_output", "c") == len(IDS)
                and harness.observed("node_output", "d") == len(IDS)
            ),
            proc,
        )

        effects = Effects(str(harness.effects))
        # A TTL far above any pause of this loop (harness.kill blocks it): the two recoverers stay
        # alive to each other however loaded the machine is; the dead owner is dropped below.
        runtimes = [Runtime(log_url, lease_ttl_s=30.0, auto_recover=False) for _ in range(2)]
        for runtime in runtimes:
            runtime.register(build(effects, set(), None))
            await runtime.open()
        try:
            # The owner is alive (its heartbeat row is fresh): nothing is an orphan.
            assert await runtimes[0].recover() == []
            record = await runtimes[0].log.record("w1")
            assert record is not None
            assert record.lease_owner is not None
            dead_owner = record.lease_owner

            harness.kill(proc)
            await runtimes[0].log.drop_owner(dead_owner)  # its lease is over
            # Both race for the orphans at once: together they take each one exactly once.
            taken = await asyncio.gather(runtimes[0].recover(), runtimes[1].recover())
            assert sorted(taken[0] + taken[1]) == sorted(IDS)
            assert not set(taken[0]) & set(taken[1])  # nobody took a workflow twice

            for index, ids in enumerate(taken):
                for workflow_id in ids:
                    snap = await runtimes[index].handle(workflow_id).settled(20)
                    assert snap.status is Status.COMPLETED
                    record = await runtimes[index].log.record(workflow_id)
                    assert record is not None
                    assert record.lease_owner is None
                    assert record.lease_owner != dead_owner
            for workflow_id in IDS:
                # b ran in the dead process and exactly once more; the rest once.
                assert harness.runs()[workflow_id] == Counter(a=1, b=2, c=1, d=1, e=1, done=1)
        finally:
            for runtime in runtimes:
                await runtime.close()
    finally:
        harness.close()


async def test_lease_is_held_while_running_and_released_after(log_url: str, tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def wait_gate(ctx: NodeContext) -> str:
        await gate.wait()
        return "ok"

    runtime = Runtime(log_url, auto_recover=False)
    other = Runtime(log_url, auto_recover=False)
    for r in (runtime, other):
        r.register(Graph("lease", "1").node("n", wait_gate))
        await r.open()
    try:
        handle = await runtime.start("lease", "w")
        record = await runtime.log.record("w")
        assert record is not None
        assert record.lease_owner == runtime.owner
        assert not await other.log.acquire("w", other.owner)  # a live owner keeps it
        assert await other.recover() == []
        gate.set()
        assert (await handle.settled(10)).status is Status.COMPLETED
        record = await runtime.log.record("w")
        assert record is not None
        assert record.lease_owner is None
        assert record.closed
    finally:
        await runtime.close()
        await other.close()


async def test_recovery_runs_on_the_heartbeat_of_the_runtimes_clock(
    make_runtime: RuntimeFactory,
) -> None:
    """The lease keeper renews every third of the TTL on the runtime's clock, and with
    auto_recover looks for orphans each time: moving the clock is what makes it look."""
    never = asyncio.Event()
    started = asyncio.Event()

    async def hangs(ctx: NodeContext) -> Any:
        started.set()
        await never.wait()

    async def finishes(ctx: NodeContext) -> Any:
        return {"by": "survivor"}

    dying = await make_runtime(Graph("lease", "1").node("n", hangs))
    clock = ManualClock()
    survivor = await make_runtime(
        Graph("lease", "1").node("n", finishes), auto_recover=True, lease_ttl_s=30, clock=clock
    )
    appended = Appended(survivor)
    await dying.start("lease", "w")
    await asyncio.wait_for(started.wait(), 10)
    await dying.close()  # records nothing, drops its owner: "w" is an orphan now
    record = await survivor.log.record("w")
    assert record is not None
    assert record.status is Status.RUNNING
    assert not survivor.holds("w")  # nobody looked yet: the survivor's clock has not moved

    await clock.advance(10)  # a third of the TTL: heartbeat, then recovery
    finished = await appended.next(EventType.WORKFLOW_FINISHED)
    assert finished.workflow_id == "w"
    assert (await survivor.snapshot("w")).result == {"n": {"by": "survivor"}}


async def test_a_lease_the_database_would_not_take_back_is_given_back_after_it_returns(
    make_runtime: RuntimeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database goes away as a node's output is appended: the execution fails, and so does
    giving its lease back. Kept by a live owner, the workflow would be no one's orphan and stay
    running forever (found by tests/mesh/test_cluster_single_points.py); the runtime gives the
    lease back after a later heartbeat, and recovery runs the workflow to its end."""
    runs: Counter[str] = Counter()
    away = asyncio.Event()  # set: the database refuses writes
    kept = asyncio.Event()  # the failed execution could not give its lease back

    async def first(ctx: NodeContext) -> Any:
        runs["first"] += 1
        if runs["first"] == 1:
            away.set()  # the database goes as this node's output is about to be recorded
        return "a"

    async def second(ctx: NodeContext) -> Any:
        runs["second"] += 1
        return "b"

    clock = ManualClock()
    graph = Graph("away", "1").node("first", first).node("second", second)
    graph.edge("first", "second")
    runtime = await make_runtime(graph, auto_recover=True, lease_ttl_s=30, clock=clock)
    log = runtime.log
    real_append, real_release = log.append, log.release

    async def append(*args: Any, **kwargs: Any) -> Any:
        if away.is_set():
            raise AccordError(ErrorCode.UNAVAILABLE, "the workflow event log is unavailable")
        return await real_append(*args, **kwargs)

    async def release(*args: Any, **kwargs: Any) -> Any:
        if away.is_set():
            kept.set()
            raise AccordError(ErrorCode.UNAVAILABLE, "the workflow event log is unavailable")
        return await real_release(*args, **kwargs)

    monkeypatch.setattr(log, "append", append)
    monkeypatch.setattr(log, "release", release)
    appended = Appended(runtime)
    await runtime.start("away", "w")
    await asyncio.wait_for(kept.wait(), 10)  # the execution failed, its lease kept
    record = await log.record("w")
    assert record is not None
    assert (record.status, record.lease_owner) == (Status.RUNNING, runtime.owner)

    away.clear()  # the database is back
    await clock.advance(10)  # a heartbeat: the lease is given back, then recovery takes it
    finished = await appended.next(EventType.WORKFLOW_FINISHED)
    assert finished.workflow_id == "w"
    snapshot = await runtime.snapshot("w")
    assert snapshot.status is Status.COMPLETED
    assert runs == Counter(first=2, second=1)  # first's output was never recorded: run again
