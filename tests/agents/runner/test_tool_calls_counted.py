"""Every tool call a refund node makes is paid from the request's budget (``Deps.call_tool``):
the Runner's tool client sees each call it makes (its observer streams them), and the log
records what each node charged. The two must agree, on every path: a node that calls the
client directly makes a call nobody paid for, and this fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.agents.runner.helpers import collect, final

from accord.agents.refund.budget import TOOL_CALLS
from accord.agents.runner import Event, Runner
from accord.contracts.status import Status
from accord.runtime.workflow import open_event_log
from accord.runtime.workflow.spending import spent_in

pytestmark = pytest.mark.timeout(120)
AGENTS = frozenset({"policy-check", "risk-check"})
# A check node's tool calls are its child's (reserved, then what the child reports): paid,
# but made by the child's own client, not the Runner's.
CHILD_NODES = frozenset({"policy", "risk"})


def tool_calls_made(events: list[Event]) -> list[str]:
    return [c.name for e in events for c in e.get_function_calls() if c.name not in AGENTS]


async def tool_calls_charged(url: str, workflow_id: str) -> int:
    log = open_event_log(url)
    await log.open()
    try:
        events = await log.read(workflow_id)
    finally:
        await log.close()
    return sum(spent_in(e.data).get(TOOL_CALLS, 0) for e in events if e.node not in CHILD_NODES)


async def test_every_tool_call_of_the_workflow_is_charged_to_the_request(
    data_dir: Path,
) -> None:
    url = f"sqlite:///{data_dir / 'counted.db'}"
    async with Runner(in_process=True, event_log_url=url) as runner:
        text = "鞋码不合适，想退款，订单 O-1001"
        first = await collect(runner, text, user="C-01", session="paid")
        # The same order again: nothing is left, and explain reads the ledger (refunds.list)
        # for the receipt it quotes.
        again = await collect(runner, text, user="C-01", session="again")
    paid, repeat = final(first), final(again)
    assert paid.status is Status.COMPLETED
    assert (paid.data or {})["decision"] == "refunded"
    assert repeat.status is Status.COMPLETED
    assert (repeat.data or {})["decision"] == "already_refunded"
    assert "refunds.list" in tool_calls_made(again)
    for events, answer in ((first, paid), (again, repeat)):
        made = tool_calls_made(events)
        assert answer.workflow_id is not None
        assert await tool_calls_charged(url, answer.workflow_id) == len(made), made
