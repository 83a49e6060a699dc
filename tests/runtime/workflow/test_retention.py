"""A runtime with a retention period deletes closed workflows past it, and keeps the ones
that still wait (an approval may wait longer than the retention period)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow import Graph, NodeContext
from tests.runtime.workflow.conftest import RuntimeFactory


async def done(ctx: NodeContext) -> dict[str, Any]:
    return {"ok": True}


async def waits(ctx: NodeContext) -> dict[str, Any]:
    answer = ctx.interrupt(WaitingReason.APPROVAL, {"why": "test"}, timeout_s=86_400.0)
    return {"answer": answer.value}


async def test_closed_workflows_past_retention_are_deleted(make_runtime: RuntimeFactory) -> None:
    graphs = (Graph("quick", "1").node("n", done), Graph("slow", "1").node("n", waits))
    first = await make_runtime(*graphs)
    finished = await (await first.start("quick", "w-quick", {})).settled()
    waiting = await (await first.start("slow", "w-slow", {})).settled()
    assert (finished.status, waiting.status) == (Status.COMPLETED, Status.WAITING)
    await first.close()

    retaining = await make_runtime(*graphs, retention_s=0.05)
    deadline = time.monotonic() + 20
    while await retaining.log.record(finished.workflow_id) is not None:
        assert time.monotonic() < deadline, "the closed workflow was never deleted"
        await asyncio.sleep(0.05)  # polling the log, bounded by the deadline
    assert (await retaining.snapshot(waiting.workflow_id)).status is Status.WAITING
