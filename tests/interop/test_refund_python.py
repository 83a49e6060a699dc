"""The refund conversation, approval included, from Python: accord.protocol's A2A client against
the orchestrator of a running mesh, over both bindings.

The customer asks; the task waits for an approver; the customer cannot approve it; an approver
approves with refund.approve; the customer's task ends refunded with a receipt. Then the
evidence continuation (O-1005): the question is answered in the same task. The orchestrator's
own Python clients (A2A to policy and risk, MCP to commerce and payments) are judged from what
the conversation shows of them: these are the matrix's python cells of the four peers.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import pytest
from tests.mesh import matrix
from tests.mesh.mesh_support import Mesh, declared, mesh_for_module, python_version, token

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(240)

# binding -> (customer, order, cents, text): each binding refunds an order of its own (seed data).
CONVERSATIONS: Final = {
    "jsonrpc": ("C-03", "O-1004", 129900, "I changed my mind about the laptop, refund O-1004"),
    "rest": ("C-04", "O-1006", 12000, "please refund order O-1006, the speaker is too big"),
}


async def _client(mesh: Mesh, subject: str, binding: str, *roles: str) -> A2AClient:
    return await A2AClient.connect(
        mesh.orchestrator, token=token(subject, *roles), transport=binding
    )


async def approval_conversation(mesh: Mesh, binding: str) -> dict[str, Any]:
    customer, order, cents, text = CONVERSATIONS[binding]
    async with await _client(mesh, customer, binding) as agent:
        asked = await agent.send(text=text, skill="refund.request")
    assert asked.status is Status.WAITING
    assert asked.waiting_reason is WaitingReason.APPROVAL
    assert asked.question is not None
    assert "approver" in asked.question

    # refund.approve admits approvers only: the customer is refused before any task exists.
    async with await _client(mesh, customer, binding) as agent:
        with pytest.raises(AccordError) as own:
            await agent.send(
                data={"task_id": asked.task_id, "decision": "approve"}, skill="refund.approve"
            )
    assert own.value.code is ErrorCode.PERMISSION_DENIED

    async with await _client(mesh, "approver-7", binding, "approver") as approver:
        decided = await approver.send(
            data={"task_id": asked.task_id, "decision": "approve", "note": "verified by phone"},
            skill="refund.approve",
        )
    assert decided.status is Status.COMPLETED, decided.error
    assert (decided.data or {})["outcome"]["result"]["decision"] == "refunded"

    async with await _client(mesh, customer, binding) as agent:
        final = await agent.get(asked.task_id)
    assert final.status is Status.COMPLETED
    result = final.data or {}
    assert result["decision"] == "refunded"
    assert result["approved_by"] == "approver-7"
    receipt = result["receipt"]
    # The key names the order and this request (its task), so a later request can refund the rest.
    assert receipt["idempotency_key"] == f"refund:{order}:{asked.task_id}"
    assert receipt["amount_cents"] == result["amount_cents"] == cents
    assert receipt["approved_by"] == "approver-7"
    return result


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_approval_conversation(mesh_for_module: Mesh, binding: str) -> None:
    said = declared(mesh_for_module, "orchestrator")
    # One matrix cell for both bindings: the JSON-RPC run records it, REST must agree.
    if binding == "rest":
        await approval_conversation(mesh_for_module, binding)
        return
    with matrix.cell(
        "orchestrator",
        "python",
        client_version=python_version(),
        contract=said.contract,
        service_contract=said.service_contract,
        note="approval conversation over JSON-RPC and HTTP+JSON; O-1005 evidence continuation",
    ):
        await approval_conversation(mesh_for_module, binding)
        await evidence_continuation(mesh_for_module)


async def evidence_continuation(mesh: Mesh) -> None:
    async with await _client(mesh, "C-01", "jsonrpc") as agent:
        asked = await agent.send(text="my mug arrived broken, order O-1005", skill="refund.request")
        assert asked.status is Status.WAITING
        assert asked.waiting_reason is WaitingReason.INPUT
        assert asked.question is not None
        assert "photo" in asked.question
        done = await agent.send(text="the handle snapped off, photo IMG_2291.jpg", task=asked)
    assert done.task_id == asked.task_id
    assert done.status is Status.COMPLETED
    assert (done.data or {})["decision"] == "refunded"
    assert (done.data or {})["rule"] == "damage_with_evidence"


@pytest.fixture(scope="module")
def automatic_refund(mesh_for_module: Mesh) -> tuple[TaskView, list[TaskView]]:
    """O-1001 refunded without an approver; every streamed view kept."""
    updates: list[TaskView] = []

    async def ask() -> TaskView:
        async with await _client(mesh_for_module, "C-01", "jsonrpc") as agent:
            return await agent.send(
                text="鞋码不合适，想退款，订单 O-1001",
                skill="refund.request",
                on_update=updates.append,
            )

    return asyncio.run(ask()), updates


def _done(updates: list[TaskView], node: str) -> str:
    lines = [u.status_text for u in updates if u.node == node and ": done" in u.status_text]
    assert lines, f"no finished {node!r} node among the updates"
    return lines[-1]


@pytest.mark.parametrize("peer", ["policy", "risk", "commerce", "payments"])
def test_the_orchestrators_python_clients_reach_each_peer(
    mesh_for_module: Mesh, automatic_refund: tuple[TaskView, list[TaskView]], peer: str
) -> None:
    view, updates = automatic_refund
    said = declared(mesh_for_module, peer)
    via = "A2A" if peer in ("policy", "risk") else "MCP"
    with matrix.cell(
        peer,
        "python",
        client_version=python_version(),
        contract=said.contract,
        service_contract=said.service_contract,
        note=f"the orchestrator's {via} client (accord.protocol) during a refund conversation",
    ):
        assert view.status is Status.COMPLETED, view.error
        data = view.data or {}
        if peer == "policy":
            assert data["rule"] == "within_window"
            assert "eligible: True" in _done(updates, peer)
        elif peer == "risk":
            assert "risk low" in _done(updates, peer)
        elif peer == "commerce":
            assert data["order_id"] == "O-1001"
            assert data["amount_cents"] == 5999
            assert _done(updates, "order")
        else:
            assert data["decision"] == "refunded"
            assert data["receipt"]["idempotency_key"].startswith("refund:O-1001:")
            assert data["receipt"]["amount_cents"] == 5999
