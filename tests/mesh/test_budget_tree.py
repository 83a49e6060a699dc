"""One budget per request, across the whole tree (issue 13), through the five real services.

An envelope of N units and T tool calls is never exceeded anywhere in the request's tree. What
is summed is measured where it happens, not taken from the orchestrator's own account:

- the orchestrator's model units: the difference in its ``/stats`` (the router's metrics)
  across the request (requests here run one at a time);
- the customer's turns: one unit each (the first message and every answer);
- the child turns' units and tool calls: what policy-check's and risk-check's child tasks of
  this request report in their own task metadata (read at those agents);
- the orchestrator's tool calls: the request's task metadata (its log), plus the children's.

The task reports the same figures (``dev.accord/spent``, ``dev.accord/remaining``), and a
request that runs out ends BUDGET_EXHAUSTED with the customer told so in their language.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import httpx
import pytest

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import ErrorCode
from accord.contracts.keys import (
    REMAINING_META_KEY,
    SPENT_META_KEY,
    TOOL_CALLS_SPENT_META_KEY,
)
from accord.contracts.status import Status
from accord.protocol.a2a.client import TaskView
from accord.protocol.auth import DEFAULT_APP
from tests.mesh.support import Mesh, answer, ask, get_task, running_mesh, token
from tests.mesh.test_task_truth import children

pytestmark = pytest.mark.timeout(300)

CUSTOMER: Final = "C-01"
REQUEST: Final = "refund order O-1001, it does not fit"
SETTLED: Final = (Status.COMPLETED, Status.FAILED, Status.WAITING)


@pytest.fixture(scope="module")
def budget_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("budget")) as mesh:
        yield mesh


def envelope(units: int, tool_calls: int = 50) -> DelegationEnvelope:
    return DelegationEnvelope(
        goal="refund",
        budget=Budget(
            units=units,
            tool_calls=tool_calls,
            deadline=datetime.now(UTC) + timedelta(minutes=5),
        ),
        tenant=Tenant(app=DEFAULT_APP, user=CUSTOMER, session="budget-test"),
    )


def model_units(mesh: Mesh) -> int:
    reply = httpx.get(
        mesh.orchestrator + "/stats",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token('svc:x', 'service')}"},
        timeout=30,
    )
    reply.raise_for_status()
    return int(reply.json()["models"]["total_units"])


async def tree_spent(mesh: Mesh, view: TaskView, before: int, turns: int) -> dict[str, int]:
    """What the request's tree spent, each part measured where it was spent."""
    kids = [
        *await children(mesh, "policy", view.task_id),
        *await children(mesh, "risk", view.task_id),
    ]
    child_units = sum(int(k.metadata.get(SPENT_META_KEY, 0)) for k in kids)
    child_calls = sum(int(k.metadata.get(TOOL_CALLS_SPENT_META_KEY, 0)) for k in kids)
    return {
        "model": model_units(mesh) - before,
        "turns": turns,
        "children": child_units,
        "child_tool_calls": child_calls,
        "units": model_units(mesh) - before + turns + child_units,
    }


async def _check(
    mesh: Mesh, view: TaskView, spent: dict[str, int], units: int, tool_calls: int
) -> None:
    assert view.status in SETTLED, view
    assert spent["units"] <= units, spent
    meta: dict[str, Any] = dict((await get_task(mesh, CUSTOMER, view.task_id)).metadata)
    # The task tells what was measured; a request stopped while a child ran keeps that
    # child's whole reservation charged (what it spent cannot be less), never more than N.
    if view.status is Status.FAILED:
        assert spent["units"] <= meta[SPENT_META_KEY] <= units, (meta, spent)
    else:
        assert meta[SPENT_META_KEY] == spent["units"], (meta, spent)
    assert meta[REMAINING_META_KEY]["units"] == units - meta[SPENT_META_KEY]
    assert spent["child_tool_calls"] <= meta[TOOL_CALLS_SPENT_META_KEY] <= tool_calls, meta
    assert meta[REMAINING_META_KEY]["tool_calls"] == tool_calls - meta[TOOL_CALLS_SPENT_META_KEY]


@pytest.mark.parametrize("units", [1, 2, 3, 5, 8, 100])
async def test_an_envelope_of_n_units_is_never_exceeded(budget_mesh: Mesh, units: int) -> None:
    before = model_units(budget_mesh)
    # A text of its own for each N: a cached answer would cost nothing and prove nothing.
    text = f"{REQUEST} (request {units})"
    view = await ask(budget_mesh, CUSTOMER, text, envelope=envelope(units))
    spent = await tree_spent(budget_mesh, view, before, turns=1)
    await _check(budget_mesh, view, spent, units, 50)
    if units >= 8:  # room for the whole tree: the turn, intake, both checks, the answer
        assert view.status is Status.COMPLETED, view
        assert spent["children"] >= 2, spent
        assert spent["model"] >= 1, spent
    if view.status is Status.FAILED:
        assert view.error is not None
        assert view.error.code is ErrorCode.BUDGET_EXHAUSTED
        assert "budget" in view.error.message  # plain words, not a router's figures


async def test_tool_calls_are_counted_across_the_tree(budget_mesh: Mesh) -> None:
    """One tool call: the orchestrator's orders.lookup takes it, and risk-check (which needs
    two) gets none, so the request stops instead of calling a tool past the envelope."""
    before = model_units(budget_mesh)
    view = await ask(budget_mesh, CUSTOMER, REQUEST, envelope=envelope(100, tool_calls=1))
    spent = await tree_spent(budget_mesh, view, before, turns=1)
    await _check(budget_mesh, view, spent, 100, 1)
    assert view.status is Status.FAILED, view
    assert view.error is not None
    assert view.error.code is ErrorCode.BUDGET_EXHAUSTED


async def test_answers_spend_from_the_same_budget_and_chinese_is_told_in_chinese(
    budget_mesh: Mesh,
) -> None:
    """A question and its answer: the answer is a turn of the same request. With 3 units the
    first turn and intake take 2, the answer's turn the third, and nothing is left to read it:
    BUDGET_EXHAUSTED, said in Chinese."""
    before = model_units(budget_mesh)
    first = await ask(budget_mesh, CUSTOMER, "我想退款", envelope=envelope(3))
    assert first.status is Status.WAITING, first
    final = await answer(budget_mesh, CUSTOMER, first, "订单 O-1001，尺码不合适")
    spent = await tree_spent(budget_mesh, final, before, turns=2)
    await _check(budget_mesh, final, spent, 3, 50)
    assert final.status is Status.FAILED, final
    assert final.error is not None
    assert final.error.code is ErrorCode.BUDGET_EXHAUSTED
    assert "预算" in final.error.message


def _attempts(mesh: Mesh, workflow_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(event type, data) of the workflow's node attempts that ended, from its log."""
    return mesh.workflow_events(workflow_id, "node_failed", "node_output")


def _failed(mesh: Mesh, workflow_id: str) -> list[dict[str, Any]]:
    return [data for kind, data in _attempts(mesh, workflow_id) if kind == "node_failed"]


async def test_a_tool_server_that_is_down_costs_the_request_no_tool_calls(
    budget_mesh: Mesh,
) -> None:
    """Calls refused at connect never reached commerce (``details["sent"] is False``): a node
    attempt that failed so spends nothing, and the request that waits out the outage pays for
    the calls that were made. Found by the chaos test: after many commerce kills a request ended
    BUDGET_EXHAUSTED, one tool call charged for every attempt that could not connect."""
    mesh = budget_mesh
    mesh.services["commerce"].kill()
    updates: list[TaskView] = []
    asking = asyncio.create_task(
        ask(mesh, CUSTOMER, f"{REQUEST} (outage)", updates, envelope=envelope(100))
    )
    end = time.monotonic() + 60
    while not updates or len(_failed(mesh, updates[0].task_id)) < 6:
        assert time.monotonic() < end, "not six failed attempts in 60 s"
        assert not asking.done(), asking.result()
        await asyncio.sleep(0.1)  # polling the log, bounded by the deadline
    await asyncio.to_thread(mesh.start, "commerce")
    view = await asking
    assert view.status is Status.COMPLETED, view.error
    failed = _failed(mesh, view.task_id)
    assert all(f["error"]["details"].get("sent") is False for f in failed), failed
    assert not [f for f in failed if f.get("spent", {}).get("tool_calls")], failed
    # The request's figure is what its successful attempts spent: the calls that were made.
    made = sum(
        int(data.get("spent", {}).get("tool_calls", 0))
        for kind, data in _attempts(mesh, view.task_id)
        if kind == "node_output"
    )
    meta = (await get_task(mesh, CUSTOMER, view.task_id)).metadata
    assert meta[TOOL_CALLS_SPENT_META_KEY] == made >= 1, (meta, made)
