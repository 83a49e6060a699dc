"""Leases: a dead owner's workflows are taken over by exactly one of two recoverers.

Two runtimes in this process, each with its own connection pool (on PostgreSQL: two
independent clients of the database), race to recover workflows whose owner was a real
process killed with SIGKILL.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from tests.agents.workflow.crash_worker import Effects, build
from tests.agents.workflow.harness import IDS, Harness

from accord.agents.workflow import Runtime
from accord.contracts.status import Status


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
        runtimes = [Runtime(log_url, lease_ttl_s=1.0, auto_recover=False) for _ in range(2)]
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
            taken: list[list[str]] = [[], []]
            deadline = asyncio.get_running_loop().time() + 20
            while sorted(taken[0] + taken[1]) != sorted(IDS):
                assert asyncio.get_running_loop().time() < deadline, taken
                got = await asyncio.gather(runtimes[0].recover(), runtimes[1].recover())
                taken[0] += got[0]
                taken[1] += got[1]
                await asyncio.sleep(0.05)  # the dead owner's lease runs out within its TTL
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
    from accord.agents.workflow import Graph, NodeContext

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
