"""THE trace test: refunds through the five real processes, each exporting its spans to a file.

One customer request is one trace across orchestrator, policy-check, risk-check, commerce and
payments, shaped as a single tree:

    orchestrator  A2A SendStreamingMessage (SERVER, under the caller's traceparent)
                   └ invoke_agent orchestrator
                      └ workflow.node {intake, order, policy, risk, decide, refund, ...}
                         ├ invoke_agent policy-check (CLIENT) ─► policy  A2A SendMessage ...
                         │                                         └ invoke_agent policy-check
                         ├ invoke_agent risk-check (CLIENT) ─► risk ... orders.customer_history
                         ├ execute_tool orders.lookup (CLIENT) ─► commerce
                         └ execute_tool refunds.issue           ─► payments

and failures carry the contract's code as ``error.type``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView, new_traceparent
from tests.mesh.support import Mesh, ask, running_mesh, token
from tests.telemetry.traces import (
    Span,
    Traces,
    ancestors,
    complete_tree,
    every,
    has,
    named,
    one,
    span_id_of,
    trace_id_of,
)

pytestmark = pytest.mark.timeout(240)

SERVICES = ("orchestrator", "policy", "risk", "commerce", "payments")


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mesh, Traces]]:
    base = tmp_path_factory.mktemp("traced-mesh")
    spans_dir = base / "telemetry"
    with pytest.MonkeyPatch.context() as patch:
        # The services inherit the environment: one setting, a file per service.
        patch.setenv("ACCORD_TRACE_FILE", str(spans_dir / "{service}.spans"))
        with running_mesh(base) as mesh:
            patch.delenv("ACCORD_TRACE_FILE")
            yield mesh, Traces({n: spans_dir / f"{n}.spans" for n in SERVICES})


def _assert_one_tree(found: list[Span], traceparent: str) -> Span:
    """Every span's parent is in the trace, except the root's (the caller's span); the root."""
    ids = {s["span_id"] for s in found}
    roots = [s for s in found if s["parent_id"] not in ids]
    assert len(roots) == 1, [(s["service"], s["name"], s["parent_id"]) for s in roots]
    (root,) = roots
    assert root["parent_id"] == span_id_of(traceparent)
    assert root["service"] == "orchestrator"
    assert root["kind"] == "SERVER"
    return root


def _under(child: Span, parent: Span, found: list[Span]) -> bool:
    return parent in ancestors(child, found)


async def test_an_automatic_refund_is_one_trace_across_five_processes(
    traced: tuple[Mesh, Traces],
) -> None:
    mesh, traces = traced
    traceparent = new_traceparent()
    view = await ask(mesh, "C-01", "鞋码不合适，想退款，订单 O-1001", traceparent=traceparent)
    assert view.status is Status.COMPLETED
    assert (view.data or {})["decision"] == "refunded"

    found = traces.wait(
        trace_id_of(traceparent),
        every(
            has(
                "payments:execute_tool refunds.issue",
                "commerce:execute_tool orders.customer_history",
                "policy:invoke_agent policy-check",
                "orchestrator:invoke_agent orchestrator",
            ),
            complete_tree(traceparent),
        ),
    )
    assert {s["service"] for s in found} == set(SERVICES)
    root = _assert_one_tree(found, traceparent)

    executor = one(found, "invoke_agent orchestrator", "orchestrator")
    assert executor["attributes"]["accord.task.id"] == view.task_id
    assert _under(executor, root, found)
    nodes = {
        s["attributes"]["accord.workflow.node"]: s for s in named_prefix(found, "workflow.node")
    }
    assert {"intake", "order", "policy", "risk", "decide", "refund"} <= set(nodes)
    for node_span in nodes.values():
        assert node_span["service"] == "orchestrator"
        assert node_span["attributes"]["accord.workflow.id"] == view.task_id
        assert node_span["attributes"]["accord.attempt"] >= 1
        assert _under(node_span, executor, found)

    for agent, service, node in (
        ("policy-check", "policy", "policy"),
        ("risk-check", "risk", "risk"),
    ):
        client = one(found, f"invoke_agent {agent}", "orchestrator")
        assert client["kind"] == "CLIENT"
        assert client["attributes"]["gen_ai.agent.name"] == agent
        assert _under(client, nodes[node], found)
        remote = one(found, f"invoke_agent {agent}", service)
        assert remote["kind"] == "INTERNAL"
        assert _under(remote, client, found)
        server = next(s for s in ancestors(remote, found) if s["kind"] == "SERVER")
        assert server["service"] == service
        assert server["parent_remote"] is True

    # Tools: each server span sits under the client span of the process that called it.
    expected_calls: set[tuple[str, str, str | None]] = {
        ("orchestrator", "orders.lookup", "order"),
        ("orchestrator", "refunds.issue", "refund"),
        ("risk", "orders.customer_history", None),
    }
    for caller, tool, calling_node in expected_calls:
        client = one(found, f"execute_tool {tool}", caller)
        assert client["kind"] == "CLIENT"
        if calling_node is not None:
            assert _under(client, nodes[calling_node], found)
        served = [
            s for s in named(found, f"execute_tool {tool}") if s["parent_id"] == client["span_id"]
        ]
        assert len(served) == 1
        assert served[0]["kind"] == "SERVER"
        assert served[0]["service"] == ("payments" if tool.startswith("refunds.") else "commerce")
        assert served[0]["attributes"]["gen_ai.tool.name"] == tool

    # Five tool calls in all: risk-check proves the order and reads its customer's history in
    # one call (it made two, orders.lookup and customers.history, each with its own ledger read).
    made = sorted(
        (s["service"], s["attributes"]["gen_ai.tool.name"])
        for s in named_prefix(found, "execute_tool ")
        if s["kind"] == "CLIENT"
    )
    assert made == [
        ("commerce", "refunds.list"),
        ("commerce", "refunds.list"),
        ("orchestrator", "orders.lookup"),
        ("orchestrator", "refunds.issue"),
        ("risk", "orders.customer_history"),
    ], made

    issue = one(found, "execute_tool refunds.issue", "payments")
    assert "error.type" not in issue["attributes"]
    # A first attempt writes without asking refunds.get first (only a resumed attempt asks).
    assert not named(found, "execute_tool refunds.get")


async def test_a_lookup_that_fails_carries_its_code_on_both_sides(
    traced: tuple[Mesh, Traces],
) -> None:
    mesh, traces = traced
    traceparent = new_traceparent()
    view = await ask(
        mesh, "C-02", "refund order O-1001 please, it does not fit", traceparent=traceparent
    )
    assert (view.data or {})["rule"] == "order_not_found"

    found = traces.wait(
        trace_id_of(traceparent),
        every(
            has("orchestrator:invoke_agent orchestrator", "commerce:execute_tool orders.lookup"),
            complete_tree(traceparent),
        ),
    )
    _assert_one_tree(found, traceparent)
    served = [s for s in named(found, "execute_tool orders.lookup", "commerce")]
    assert served
    for span in served:
        assert span["attributes"]["error.type"] == ErrorCode.NOT_FOUND.value
        assert span["status"] == "ERROR"
    # The three checks share one lookup while it is in flight; under load a check may start
    # after it returned and look up again: every call carries the code, however many.
    calls = named(found, "execute_tool orders.lookup", "orchestrator")
    assert calls
    for client in calls:
        assert client["attributes"]["error.type"] == ErrorCode.NOT_FOUND.value
    # The customer's task itself completed (a refusal is an answer, not a failure).
    executor = one(found, "invoke_agent orchestrator", "orchestrator")
    assert "error.type" not in executor["attributes"]


async def test_an_approval_refused_and_granted_each_trace_with_codes(
    traced: tuple[Mesh, Traces],
) -> None:
    mesh, traces = traced
    view = await ask(mesh, "C-03", "I changed my mind about the laptop, refund order O-1004")
    assert view.waiting_reason is WaitingReason.APPROVAL

    # A customer asking for refund.approve is refused at the gate, before any task or agent
    # invocation exists (AGENT-009): the caller gets the code, there is no agent span to mark.
    with pytest.raises(AccordError) as denied:
        await approve(mesh, "C-03", ("customer",), view.task_id, traceparent=new_traceparent())
    assert denied.value.code is ErrorCode.PERMISSION_DENIED

    granted_tp = new_traceparent()
    decided = await approve(mesh, "approver-1", ("approver",), view.task_id, traceparent=granted_tp)
    assert decided.status is Status.COMPLETED
    # The resumed workflow's nodes run in the approver's trace, down to the payment.
    found = traces.wait(
        trace_id_of(granted_tp),
        every(has("payments:execute_tool refunds.issue"), complete_tree(granted_tp)),
    )
    _assert_one_tree(found, granted_tp)
    refund_node = [
        s
        for s in named_prefix(found, "workflow.node")
        if s["attributes"]["accord.workflow.node"] == "refund"
    ]
    assert len(refund_node) == 1
    issue = one(found, "execute_tool refunds.issue", "payments")
    assert _under(issue, refund_node[0], found)


async def approve(
    mesh: Mesh, subject: str, roles: tuple[str, ...], task_id: str, traceparent: str
) -> TaskView:
    async with await A2AClient.connect(mesh.orchestrator, token=token(subject, *roles)) as c:
        return await c.send(
            data={"task_id": task_id, "decision": "approve"},
            skill="refund.approve",
            traceparent=traceparent,
        )


def named_prefix(found: list[Span], prefix: str) -> list[Span]:
    return [s for s in found if s["name"].startswith(prefix.rstrip() + " ")]
