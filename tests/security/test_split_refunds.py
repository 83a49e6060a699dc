"""Approval by the money, not the message (issue #30, finding 2).

Found against `accord up`: C-03 asked for $499, then $499, then $301 of the $1,299 laptop
O-1004, and all three were refunded without an approver: the threshold (500.00) was judged per
message. The rule now (docs/refund-assistant.md, "Approval by the money"): a refund no approver
approved is paid only while what was paid without one, plus its amount, stays below the
threshold, for the order and for the customer over 90 days. Payments enforces it where the money
is written, in the transaction that writes it (per-customer locks), and when payments refuses
the orchestrator asks the approver instead of failing (a request of the threshold or more is
sent to the approver up front by risk-check's ``large_amount``, as before).

Real processes throughout: the five services (SQLite), two payments processes on one PostgreSQL
database, and two orchestrator replicas on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from typing import Any, Final

import asyncpg
import httpx
import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import TaskView
from tests.mesh.replica_support import Replicas, running_replicas
from tests.mesh.support import Mesh, approve, ask, get_task, running_mesh, token
from tests.support import postgres
from tests.support.processes import Service, run_service
from tests.support.tool_auth import secret_env
from tests.tools.helpers import ServiceClient, error_of, output_of

pytestmark = pytest.mark.timeout(420)

THRESHOLD: Final = 50_000  # the default approval threshold (500.00)
APPROVER: Final = ("approver-1", ("approver",))
# C-03's laptop (O-1004, 1,299.00): what the customer asked for, in that order.
SPLIT: Final = ((49_900, "499"), (49_900, "499"), (30_100, "301"))


def _ask_text(dollars: str) -> str:
    return f"I changed my mind, please refund ${dollars} of order O-1004"


def _ledger(mesh: Mesh, customer: str) -> list[tuple[int, str | None]]:
    """(amount, approved_by) of every refund of ``customer`` in the ledger (SQLite mesh)."""
    with sqlite3.connect(mesh.data_dir / "payments.db") as conn:
        rows = conn.execute(
            "SELECT amount_cents, approved_by FROM payments_refunds WHERE customer_id = ?",
            (customer,),
        ).fetchall()
    return [(int(amount), approver) for amount, approver in rows]


def _unapproved(rows: list[tuple[int, str | None]]) -> int:
    return sum(amount for amount, approver in rows if approver is None)


async def _queue(mesh: Mesh) -> dict[str, dict[str, Any]]:
    """The approver's queue: task id -> its facts."""
    async with httpx.AsyncClient() as http:
        answer = await http.get(
            mesh.orchestrator + "/approvals",
            headers={
                "A2A-Version": "1.0",
                "Authorization": f"Bearer {token(APPROVER[0], *APPROVER[1])}",
            },
            timeout=30,
        )
    answer.raise_for_status()
    return {item["task_id"]: item["facts"] for item in answer.json()["approvals"]}


@pytest.fixture(scope="module")
def split_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("split")) as mesh:
        yield mesh


async def test_a_split_refund_goes_to_the_approver_once_the_money_reaches_the_threshold(
    split_mesh: Mesh,
) -> None:
    mesh = split_mesh
    views: list[TaskView] = []
    for _cents, dollars in SPLIT:
        views.append(await ask(mesh, "C-03", _ask_text(dollars)))
    first, *rest = views
    # $499: below 500.00 with nothing paid before; refunded without an approver.
    assert first.status is Status.COMPLETED, first.error
    assert (first.data or {})["decision"] == "refunded"
    assert (first.data or {})["approved_by"] is None
    # $499 more, then $301 more: either would take what was paid without an approver to
    # 998.00 / 800.00. Both wait for an approver; nothing of them was paid.
    for view in rest:
        assert view.status is Status.WAITING, view.error
        assert view.waiting_reason is WaitingReason.APPROVAL
    assert _ledger(mesh, "C-03") == [(49_900, None)]
    queue = await _queue(mesh)
    for view in rest:
        facts = queue[view.task_id]
        assert facts["order_id"] == "O-1004"
        # Asked by the refund node after payments refused: the refusal is in the facts.
        assert facts["payments"]["reason"] == "approval_required"
        assert facts["payments"]["unapproved_cents"] == 49_900
        assert facts["payments"]["threshold_cents"] == THRESHOLD

    # The approver approves both: each is paid, under the approver's name.
    for view in rest:
        decided = await approve(mesh, *APPROVER, view.task_id, note="checked the laptop")
        assert decided.status is Status.COMPLETED, decided.error
        final = await get_task(mesh, "C-03", view.task_id)
        assert final.status is Status.COMPLETED, final.error
        assert (final.data or {})["decision"] == "refunded"
        assert (final.data or {})["approved_by"] == "approver-1"
    rows = _ledger(mesh, "C-03")
    assert sorted(rows, key=repr) == sorted(
        [(49_900, None), (49_900, "approver-1"), (30_100, "approver-1")], key=repr
    )
    assert _unapproved(rows) < THRESHOLD


# -- payments itself: the rule in the transaction that writes the money ------------------------

LOW_THRESHOLD: Final = 10_000  # 100.00: the seeded orders of C-01 cross it between them


@pytest.fixture(scope="module")
def two_payments(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Service]]:
    """Two payments processes on one PostgreSQL database (as two replicas would run)."""
    base = tmp_path_factory.mktemp("two-payments")
    env = {
        **secret_env(),
        "ACCORD_DATABASE_URL": postgres.fresh_database(postgres_server_url),
        "ACCORD_APPROVAL_THRESHOLD_CENTS": str(LOW_THRESHOLD),
    }
    options: dict[str, Any] = {"log_dir": base, "health_path": "/readyz", "deadline_s": 90.0}
    with (
        run_service("payments", ["serve", "payments"], env=env, **options) as one,
        run_service("payments", ["serve", "payments"], env=env, **options) as other,
    ):
        yield one, other


def _refund(key: str, order_id: str, customer_id: str, cents: int, **extra: Any) -> dict[str, Any]:
    return {
        "idempotency_key": key,
        "order_id": order_id,
        "customer_id": customer_id,
        "amount_cents": cents,
        "reason": "changed my mind",
        **extra,
    }


async def _issue(service: Service, arguments: dict[str, Any]) -> Any:
    async with ServiceClient(service.url + "/mcp") as client:
        return await client.call_tool("refunds.issue", arguments)


async def test_concurrent_unapproved_refunds_through_two_payments_stay_below_the_threshold(
    two_payments: tuple[Service, Service],
) -> None:
    # Ten 30.00 refunds of C-03's laptop at once, half through each process: three fit below
    # 100.00 (a fourth would make 120.00); the rest are refused before anything is written.
    calls = [_refund(f"split:race:{n}", "O-1004", "C-03", 3_000) for n in range(10)]
    results = await asyncio.gather(
        *(_issue(two_payments[n % 2], call) for n, call in enumerate(calls))
    )
    paid = [output_of(r) for r in results if not r.is_error]
    refused = [error_of(r) for r in results if r.is_error]
    assert len(paid) == 3
    assert {e.code for e in refused} == {ErrorCode.POLICY_DENIED}
    assert {e.details["reason"] for e in refused} == {"approval_required"}
    assert all(e.details["threshold_cents"] == LOW_THRESHOLD for e in refused)
    # The same refund with an approver in the delegation is paid: the rule binds unapproved
    # money only.
    approved = await _issue(
        two_payments[0],
        _refund("split:race:0-approved", "O-1004", "C-03", 3_000, approved_by="a-1"),
    )
    assert output_of(approved)["receipt"]["approved_by"] == "a-1"


async def test_the_customers_unapproved_total_spans_their_orders(
    two_payments: tuple[Service, Service],
) -> None:
    one, other = two_payments
    # 59.99 of O-1001, then O-1002 (another order of C-01): 40.01 more would make 100.00.
    output_of(await _issue(one, _refund("split:c01:a", "O-1001", "C-01", 5_999)))
    refused = error_of(await _issue(other, _refund("split:c01:b", "O-1002", "C-01", 4_001)))
    assert refused.code is ErrorCode.POLICY_DENIED
    assert refused.details == {
        "reason": "approval_required",
        "threshold_cents": LOW_THRESHOLD,
        "unapproved_cents": 5_999,
    }
    # 40.00 stays below it and is paid.
    output_of(await _issue(other, _refund("split:c01:c", "O-1002", "C-01", 4_000)))
    # The refused key was not used: sent again with an approver, it is paid under it.
    approved = await _issue(one, _refund("split:c01:b", "O-1002", "C-01", 4_001, approved_by="a-1"))
    assert output_of(approved)["replayed"] is False


# -- two orchestrator replicas ---------------------------------------------------------------


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str
) -> Iterator[Replicas]:
    with running_replicas(
        tmp_path_factory.mktemp("split-replicas"),
        postgres.fresh_database(postgres_server_url),
        {},
        {},
    ) as started:
        yield started


async def _ledger_rows(replicas: Replicas, customer: str) -> list[tuple[int, str | None]]:
    conn = await asyncpg.connect(replicas.database_url)
    try:
        rows = await conn.fetch(
            "SELECT amount_cents, approved_by FROM payments_refunds WHERE customer_id = $1",
            customer,
        )
    finally:
        await conn.close()
    return [(int(r["amount_cents"]), r["approved_by"]) for r in rows]


async def test_concurrent_requests_through_two_replicas_pay_no_more_than_the_threshold_unapproved(
    replicas: Replicas,
) -> None:
    a, b = replicas.via("a"), replicas.via("b")
    # Four $300 requests of the laptop at once, two through each replica: each is below
    # 500.00, any two are not. Whatever the interleaving, one is paid without an approver and
    # the others wait for one (payments refused them; nothing of them was paid).
    views = await asyncio.gather(
        *(ask(mesh, "C-03", _ask_text("300")) for mesh in (a, b, a, b)),
    )
    refunded = [v for v in views if v.status is Status.COMPLETED]
    waiting = [v for v in views if v.status is Status.WAITING]
    assert len(refunded) == 1, [(v.status, v.error) for v in views]
    assert (refunded[0].data or {})["approved_by"] is None
    assert len(waiting) == 3
    assert all(v.waiting_reason is WaitingReason.APPROVAL for v in waiting)
    assert _unapproved(await _ledger_rows(replicas, "C-03")) == 30_000

    # Approved (through either replica), each is paid under the approver's name.
    for n, view in enumerate(waiting):
        decided = await approve((a, b)[n % 2], *APPROVER, view.task_id)
        assert decided.status is Status.COMPLETED, decided.error
    rows = await _ledger_rows(replicas, "C-03")
    assert sorted(rows, key=repr) == sorted(
        [(30_000, None)] + [(30_000, "approver-1")] * 3, key=repr
    )
    assert _unapproved(rows) < THRESHOLD
