"""A node asks the log before it writes: canceled through another runtime, it writes nothing.

Two runtimes (two replicas) on one database, SQLite and PostgreSQL. The runtime that runs a
workflow learns of another's cancel only when its next append is refused; a node that is about
to write outside the log (a payment) calls ``ctx.ensure_open()`` first (#35).
"""

from __future__ import annotations

import asyncio
from typing import Any

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.runtime.workflow import EventType, Graph, NodeContext
from tests.runtime.workflow.conftest import RuntimeFactory


def _paying_graph(started: asyncio.Event, go: asyncio.Event, wrote: list[str]) -> Graph:
    async def pay(ctx: NodeContext) -> Any:
        started.set()
        await go.wait()
        await ctx.ensure_open()
        wrote.append(ctx.workflow_id)
        return "paid"

    return Graph("pay", "1").node("pay", pay)


async def test_a_node_canceled_through_another_runtime_writes_nothing(
    make_runtime: RuntimeFactory,
) -> None:
    started, go, wrote = asyncio.Event(), asyncio.Event(), list[str]()
    graph = _paying_graph(started, go, wrote)
    here, elsewhere = await make_runtime(graph), await make_runtime(graph)
    handle = await here.start("pay", "w")
    await asyncio.wait_for(started.wait(), 10)
    await elsewhere.cancel("w", reason="canceled on the other replica")
    assert here.holds("w")  # the runner here does not know yet
    go.set()

    snap = await handle.settled(10)
    assert wrote == []
    assert snap.status is Status.FAILED
    assert snap.error is not None
    assert snap.error.code is ErrorCode.CANCELED
    types = [e.type for e in await here.log.read("w")]
    assert types.count(EventType.CANCELED) == 1
    assert EventType.WORKFLOW_FINISHED not in types
    assert types[-1] is EventType.CANCELED  # nothing written over the cancel


async def test_a_node_of_an_open_workflow_writes(make_runtime: RuntimeFactory) -> None:
    started, go, wrote = asyncio.Event(), asyncio.Event(), list[str]()
    runtime = await make_runtime(_paying_graph(started, go, wrote))
    go.set()
    snap = await (await runtime.start("pay", "w")).settled(10)
    assert snap.status is Status.COMPLETED
    assert wrote == ["w"]
