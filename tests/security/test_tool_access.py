"""Issue 12: who may call what is part of the tool contract, and the customer (and approver) a
tool acts on comes from the verified call, never from an argument; against real processes.

Before: any caller could issue refunds and read any customer's orders and history, and
``approved_by`` was whatever the arguments said.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import TOOL_DELEGATION_META_KEY
from accord.contracts.tools import shipped_tool_contracts
from tests.mesh.support import Mesh, approve, ask, get_task, running_mesh, token
from tests.security.tool_servers import ToolServers, call, code, tool_servers
from tests.support.tool_auth import (
    customer_token,
    delegation_meta,
    service_token,
    token_for,
)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolServers]:
    with tool_servers(tmp_path_factory.mktemp("tool-access")) as found:
        yield found


def _refund(order: str = "O-1001", customer: str = "C-01", **extra: Any) -> dict[str, Any]:
    return {
        "idempotency_key": f"sec:{uuid.uuid4().hex}",
        "order_id": order,
        "customer_id": customer,
        "amount_cents": 100,
        "reason": "security test",
        **extra,
    }


def _rows(servers: ToolServers, args: dict[str, Any]) -> int:
    return servers.ledger_rows(f"idempotency_key = '{args['idempotency_key']}'")


def test_every_shipped_tool_declares_who_may_call_it() -> None:
    for name, contract in shipped_tool_contracts().items():
        assert contract.access is not None, name
        assert contract.access.customer_field == "customer_id", name
        assert ErrorCode.PERMISSION_DENIED in contract.errors, name
    issue = shipped_tool_contracts()["refunds.issue"].access
    assert issue is not None
    assert [(r.role.value, r.scope) for r in issue.allow] == [("service", "refunds.issue")]


async def test_a_customer_token_cannot_issue_a_refund(servers: ToolServers) -> None:
    args = _refund()
    for meta in (None, delegation_meta("C-01")):
        result = await call(
            servers.mcp("payments"), "refunds.issue", args, token=customer_token(), meta=meta
        )
        assert code(result) is ErrorCode.PERMISSION_DENIED
    assert _rows(servers, args) == 0


@pytest.mark.parametrize(
    "make_token",
    [
        lambda: service_token(["orders.lookup", "refunds.get"]),  # asks for other tools only
        lambda: service_token(name="cli"),  # a service its table grants nothing
        lambda: service_token(name="risk"),  # a service granted reads only
        lambda: token_for("approver-1", ["approver"]),  # a person who approves, not a service
    ],
    ids=["other-grants", "no-grants", "read-grants", "approver"],
)
async def test_a_principal_without_the_grant_cannot_issue(
    servers: ToolServers, make_token: Callable[[], str]
) -> None:
    token = make_token()  # signed when the test runs: the session's keys are set up by then
    args = _refund()
    result = await call(
        servers.mcp("payments"), "refunds.issue", args, token=token, meta=delegation_meta("C-01")
    )
    assert code(result) is ErrorCode.PERMISSION_DENIED
    assert _rows(servers, args) == 0


async def test_refunds_get_is_for_granted_services_only(servers: ToolServers) -> None:
    args = {"idempotency_key": "refund:O-1001", "customer_id": "C-01"}
    mine = await call(servers.mcp("payments"), "refunds.get", args, token=customer_token())
    assert code(mine) is ErrorCode.PERMISSION_DENIED
    granted = await call(
        servers.mcp("payments"),
        "refunds.get",
        args,
        token=service_token(["refunds.get"]),
        meta=delegation_meta("C-01"),
    )
    assert code(granted) is None


async def test_a_customer_reads_only_their_own_orders_and_history(servers: ToolServers) -> None:
    commerce, me = servers.mcp("commerce"), customer_token("C-01")
    own = await call(
        commerce, "orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"}, token=me
    )
    assert code(own) is None
    # Naming another customer is an access question: refused before any data is read.
    theirs = await call(
        commerce, "orders.lookup", {"order_id": "O-1003", "customer_id": "C-02"}, token=me
    )
    assert code(theirs) is ErrorCode.PERMISSION_DENIED
    history = await call(commerce, "customers.history", {"customer_id": "C-04"}, token=me)
    assert code(history) is ErrorCode.PERMISSION_DENIED
    # Another customer's order under one's own id is the data question: NOT_FOUND, as before.
    foreign = await call(
        commerce, "orders.lookup", {"order_id": "O-1003", "customer_id": "C-01"}, token=me
    )
    assert code(foreign) is ErrorCode.NOT_FOUND
    # A delegation names no one else for a customer either (the acting-on-behalf rule).
    claimed = await call(
        commerce,
        "customers.history",
        {"customer_id": "C-04"},
        token=me,
        meta=delegation_meta("C-04"),
    )
    assert code(claimed) is ErrorCode.PERMISSION_DENIED


async def test_a_service_reads_only_for_the_customer_it_acts_for(servers: ToolServers) -> None:
    commerce, svc = servers.mcp("commerce"), service_token(["orders.lookup", "customers.history"])
    args = {"order_id": "O-1003", "customer_id": "C-02"}
    acting = await call(commerce, "orders.lookup", args, token=svc, meta=delegation_meta("C-02"))
    assert code(acting) is None
    other = await call(commerce, "orders.lookup", args, token=svc, meta=delegation_meta("C-01"))
    assert code(other) is ErrorCode.PERMISSION_DENIED
    bare = await call(commerce, "customers.history", {"customer_id": "C-02"}, token=svc)
    assert code(bare) is ErrorCode.PERMISSION_DENIED  # a service must say for whom


async def test_a_forged_approved_by_is_refused(servers: ToolServers) -> None:
    payments, svc = servers.mcp("payments"), service_token(["refunds.issue"])
    forged = _refund(approved_by="approver-1")
    result = await call(payments, "refunds.issue", forged, token=svc, meta=delegation_meta("C-01"))
    assert code(result) is ErrorCode.PERMISSION_DENIED
    assert _rows(servers, forged) == 0
    other = _refund(approved_by="approver-2")
    result = await call(
        payments, "refunds.issue", other, token=svc, meta=delegation_meta("C-01", "approver-1")
    )
    assert code(result) is ErrorCode.PERMISSION_DENIED
    assert _rows(servers, other) == 0


async def test_the_approver_recorded_is_the_delegations(servers: ToolServers) -> None:
    payments, svc = servers.mcp("payments"), service_token(["refunds.issue"])
    approved = _refund(order="O-1005")
    result = await call(
        payments, "refunds.issue", approved, token=svc, meta=delegation_meta("C-01", "approver-1")
    )
    assert code(result) is None, result
    receipt = (result.structured_content or {})["receipt"]
    assert receipt["approved_by"] == "approver-1"
    assert receipt["customer_id"] == "C-01"
    plain = _refund(order="O-1005")
    result = await call(payments, "refunds.issue", plain, token=svc, meta=delegation_meta("C-01"))
    assert (result.structured_content or {})["receipt"]["approved_by"] is None


async def test_a_malformed_delegation_is_invalid_input(servers: ToolServers) -> None:
    args = _refund()
    for bad in ({"tenant": {"user": "C-01"}}, "C-01", {"tenant": {}, "extra": 1}):
        result = await call(
            servers.mcp("payments"),
            "refunds.issue",
            args,
            token=service_token(["refunds.issue"]),
            meta={TOOL_DELEGATION_META_KEY: bad},
        )
        assert code(result) is ErrorCode.INVALID_INPUT
    assert _rows(servers, args) == 0


# -- the whole mesh: credentials and the customer flow end to end ----------------------------


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("tool-access-mesh")) as found:
        yield found


def _ledger(mesh: Mesh, order: str) -> list[tuple[str, str | None, int]]:
    with sqlite3.connect(Path(mesh.data_dir) / "payments.db") as conn:
        rows = conn.execute(
            "SELECT customer_id, approved_by, amount_cents FROM payments_refunds "
            "WHERE order_id = ?",
            (order,),
        ).fetchall()
    return [(str(c), a, int(n)) for c, a, n in rows]


async def test_the_refund_demo_runs_end_to_end_with_credentials(mesh: Mesh) -> None:
    """orchestrator -> policy/risk -> commerce, orchestrator -> payments: every hop verified."""
    done = await ask(mesh, "C-01", "I changed my mind about the earbuds, refund order O-1001")
    assert done.data is not None, done.error
    assert done.data["decision"] == "refunded"
    assert _ledger(mesh, "O-1001") == [("C-01", None, 5999)]
    # A high-risk refund: the approver the ledger records is the one who approved.
    waiting = await ask(mesh, "C-03", "I changed my mind about the laptop, refund order O-1004")
    decided = await approve(mesh, "approver-1", ("approver",), waiting.task_id)
    assert decided.error is None, decided.error
    final = await get_task(mesh, "C-03", waiting.task_id)
    assert (final.data or {})["decision"] == "refunded"
    assert _ledger(mesh, "O-1004") == [("C-03", "approver-1", 129900)]


async def test_the_final_sale_order_stays_unrefunded(mesh: Mesh) -> None:
    """The issue's O-1003: policy-check refuses it, and no one can go around to payments."""
    view = await ask(mesh, "C-02", "I changed my mind about the rain jacket, refund order O-1003")
    assert (view.data or {}).get("decision") == "not_eligible", view
    forged = await call(
        mesh.url("payments") + "/mcp",
        "refunds.issue",
        _refund(order="O-1003", customer="C-02", amount_cents=4500),
        token=token("C-02"),  # the mesh's secret: a valid customer token
        meta=delegation_meta("C-02", "approver-1"),
    )
    assert code(forged) is ErrorCode.PERMISSION_DENIED
    assert _ledger(mesh, "O-1003") == []
