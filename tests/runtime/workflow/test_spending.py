"""What a workflow spent is recorded in its log and summed on replay (issue 13: one budget per
request; accord.runtime.workflow.spending)."""

from __future__ import annotations

import asyncio
from typing import Any

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow import Graph, NodeContext
from tests.runtime.workflow.conftest import RuntimeFactory


def spending_graph(limit: int, seen: list[int]) -> Graph:
    """Two parallel nodes charge one shared account with a limit, three units each; the join
    asks a question (its attempt's spending is recorded with the interrupt) and spends again
    once answered."""
    both_running = asyncio.Barrier(2)

    async def start(ctx: NodeContext) -> Any:
        ctx.spend("units", 1)
        return None

    async def charge(ctx: NodeContext) -> Any:
        await both_running.wait()  # the sibling's charges are in flight, not in the log yet
        for _ in range(3):
            if ctx.tally.total("units") + 1 > limit:
                raise AccordError(ErrorCode.BUDGET_EXHAUSTED)
            ctx.spend("units", 1)
            await asyncio.sleep(0)
        return ctx.node

    async def ask(ctx: NodeContext) -> Any:
        seen.append(ctx.tally.total("units"))
        ctx.spend("tool_calls", 2)
        answer = ctx.interrupt(WaitingReason.INPUT, {"q": "?"})
        ctx.spend("tool_calls", 1)
        return answer.value

    g = Graph("spend", "1").node("start", start).node("a", charge).node("b", charge)
    g.node("ask", ask).edge("start", "a", "b").join(["a", "b"], "ask")
    return g


async def test_spending_is_shared_recorded_and_replayed(make_runtime: RuntimeFactory) -> None:
    seen: list[int] = []
    runtime = await make_runtime(spending_graph(7, seen))
    snap = await (await runtime.start("spend", "w1", {}, spent={"turns": 1})).settled(10)
    assert snap.status is Status.WAITING
    assert snap.spent == {"turns": 1, "units": 7, "tool_calls": 2}
    assert seen == [7]  # the join saw both siblings' spending
    ask = snap.interrupts[0]
    resumed = await runtime.resume("w1", ask.interrupt_id, "ok", "u:1", spent={"turns": 1})
    done = await resumed.settled(10)
    assert done.status is Status.COMPLETED
    # The rerun of ask spent its 2 tool calls again (a rerun costs) and 1 more.
    assert done.spent == {"turns": 2, "units": 7, "tool_calls": 5}
    # A fresh runtime on the same log knows it from the events alone.
    again = await make_runtime(spending_graph(7, []))
    assert (await again.snapshot("w1")).spent == done.spent


async def test_parallel_nodes_never_spend_past_a_shared_limit(
    make_runtime: RuntimeFactory,
) -> None:
    """Limit 5: start takes 1, and a and b, running together, 4 of the 6 units they try; the one
    refused fails the workflow, and what both spent is in the log all the same."""
    runtime = await make_runtime(spending_graph(5, []))
    snap = await (await runtime.start("spend", "w2", {})).settled(10)
    assert snap.status is Status.FAILED
    assert snap.error is not None
    assert snap.error.code is ErrorCode.BUDGET_EXHAUSTED
    assert snap.spent == {"units": 5}
    again = await make_runtime(spending_graph(5, []))
    assert (await again.snapshot("w2")).spent == {"units": 5}
