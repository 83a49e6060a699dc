"""Who may ask an agent for what is in its contract (AGENT-009).

Found against a running mesh (issue #30, finding 3): a token ``svc:whatever`` with role
``service`` and no grant at all (or ``svc:risk``, ``svc:commerce`` with only their read grants)
sent "refund $7 of order O-1001" with an envelope naming C-01, and the refund was paid with no
approver: grants were checked only at the tool servers, never at the agents. Now each skill's
``access`` in the agent contract is an allow-list the A2A gate applies before any task exists:
customers for themselves, approvers for approvals, and a service only with the skill's grant.
Real processes: the five services of one mesh.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from accord.agents.refund.peers import peer_grants
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from tests.mesh.mesh_support import Mesh
from tests.mesh.money_support import ledger_sums
from tests.mesh.support import token
from tests.support.service_keys import TEST_SERVICE, sign_as

pytestmark = pytest.mark.timeout(300)

REFUND_TEXT = "refund $7 of order O-1001"


def _service(name: str, *grants: str) -> str:
    """``svc:NAME``'s token, signed by its own key; the trust table decides its grants."""
    return sign_as(name, scopes=grants)


def _for(customer: str) -> DelegationEnvelope:
    deadline = datetime.now(UTC) + timedelta(minutes=2)
    return DelegationEnvelope(
        goal="refund",
        budget=Budget(units=50, tool_calls=20, deadline=deadline),
        tenant=Tenant(app="accord", user=customer, session="skill-access"),
    )


async def _ask(url: str, bearer: str, skill: str, **message: object) -> TaskView:
    async with await A2AClient.connect(url, token=bearer) as client:
        return await client.send(skill=skill, **message)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "grants"),
    [
        pytest.param("cli", (), id="a trusted service granted nothing"),
        pytest.param("risk", ("orders.lookup", "orders.customer_history"), id="risk-check's token"),
        pytest.param("commerce", ("refunds.list",), id="commerce's token"),
        pytest.param("orchestrator", tuple(peer_grants()), id="the orchestrator's own token"),
    ],
)
async def test_a_service_without_the_grant_cannot_start_a_refund(
    mesh: Mesh, name: str, grants: tuple[str, ...]
) -> None:
    bearer = _service(name, *grants)
    before = ledger_sums(mesh).get("O-1001")
    with pytest.raises(AccordError) as refused:
        await _ask(
            mesh.orchestrator, bearer, "refund.request", text=REFUND_TEXT, envelope=_for("C-01")
        )
    assert refused.value.code is ErrorCode.PERMISSION_DENIED
    assert refused.value.details.get("requirement") == "AGENT-009"
    assert ledger_sums(mesh).get("O-1001") == before  # nothing paid


async def test_a_service_granted_refund_request_acts_for_the_customer(mesh: Mesh) -> None:
    """A front end the operator granted refund.request is admitted, for its envelope's
    customer (a request naming no order waits for the customer to say which: nothing paid)."""
    front = _service(TEST_SERVICE, "refund.request")  # the session's table grants it
    view = await _ask(
        mesh.orchestrator, front, "refund.request", text="I want a refund", envelope=_for("C-01")
    )
    assert (view.status, view.waiting_reason) == (Status.WAITING, WaitingReason.INPUT), view


async def test_a_customer_cannot_ask_for_an_approval(mesh: Mesh) -> None:
    with pytest.raises(AccordError) as refused:
        await _ask(
            mesh.orchestrator,
            token("C-01"),
            "refund.approve",
            data={"task_id": "whatever", "decision": "approve"},
        )
    assert refused.value.code is ErrorCode.PERMISSION_DENIED
    assert refused.value.details.get("skill") == "refund.approve"


@pytest.mark.parametrize(("peer", "skill"), [("policy", "refund.policy"), ("risk", "refund.risk")])
async def test_the_checks_admit_the_orchestrators_grant_only(
    mesh: Mesh, peer: str, skill: str
) -> None:
    data = {"order_id": "O-1001", "customer_id": "C-01"}
    if skill == "refund.policy":
        data = {**data, "reason": "wrong_size"}
    for refused in (_service("cli"), _service("commerce", "refunds.list")):
        with pytest.raises(AccordError) as denied:
            await _ask(mesh.url(peer), refused, skill, data=data, envelope=_for("C-01"))
        assert denied.value.code is ErrorCode.PERMISSION_DENIED
    granted = _service("orchestrator", *peer_grants())
    view = await _ask(mesh.url(peer), granted, skill, data=data, envelope=_for("C-01"))
    assert view.status is Status.COMPLETED, view
