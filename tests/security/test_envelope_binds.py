"""Envelopes bind: the constraints a skill honours are in its contract and enforced, and the
context refs reach the children that read them (ENV-007, ENV-008).

Found against a running mesh (issue #30, finding 6): an envelope with ``constraints:
{max_refund_cents: 100}`` and "refund order O-1005" got 3,500 cents refunded; constraints, goal
and context refs were accepted and ignored. Now refund.request declares ``max_refund_cents``
(a refund above it is not paid: not_eligible, rule amount_exceeds_limit), any other constraint
or a wrong type is INVALID_INPUT before a task exists, and the context refs go to policy-check,
which reads them as the evidence of a damage claim (and to no one else: risk-check refuses
them). Real processes: the five services of a mesh of this module's own (it counts refunds).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient, TaskView
from tests.mesh.mesh_support import Mesh, mesh_for_module
from tests.mesh.money_support import ledger_sums
from tests.mesh.support import token
from tests.support.service_keys import sign_as

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(300)


def _envelope(
    user: str, constraints: dict[str, str | int | bool], refs: list[str] | None = None
) -> DelegationEnvelope:
    return DelegationEnvelope(
        goal="refund",
        constraints=constraints,
        context_refs=refs or [],
        budget=Budget(units=50, tool_calls=20, deadline=datetime.now(UTC) + timedelta(minutes=2)),
        tenant=Tenant(app="accord", user=user, session="envelope-binds"),
    )


async def _ask(mesh: Mesh, text: str, envelope: DelegationEnvelope) -> TaskView:
    async with await A2AClient.connect(mesh.orchestrator, token=token("C-01")) as client:
        return await client.send(text=text, skill="refund.request", envelope=envelope)


async def test_a_refund_above_max_refund_cents_is_not_paid(mesh_for_module: Mesh) -> None:
    before = ledger_sums(mesh_for_module).get("O-1005")
    view = await _ask(
        mesh_for_module,
        "I changed my mind, refund order O-1005",
        _envelope("C-01", {"max_refund_cents": 100}),
    )
    assert view.status is Status.COMPLETED, view
    result = view.data or {}
    assert (result["decision"], result["rule"], result["amount_cents"]) == (
        "not_eligible",
        "amount_exceeds_limit",
        0,
    ), result
    assert ledger_sums(mesh_for_module).get("O-1005") == before  # nothing paid


async def test_a_refund_within_max_refund_cents_is_paid(mesh_for_module: Mesh) -> None:
    before = ledger_sums(mesh_for_module).get("O-1001", (0, 0))
    view = await _ask(
        mesh_for_module,
        "I changed my mind, refund $10 of order O-1001",
        _envelope("C-01", {"max_refund_cents": 1000}),
    )
    assert view.status is Status.COMPLETED, view
    assert (view.data or {})["decision"] == "refunded", view.data
    assert ledger_sums(mesh_for_module)["O-1001"] == (before[0] + 1, before[1] + 1000)


@pytest.mark.parametrize(
    ("constraints", "rule"),
    [
        ({"max_refunds": 1}, "undeclared"),  # a constraint refund.request does not honour
        ({"max_refund_cents": "100"}, "integer"),  # a declared one of the wrong JSON type
        ({"max_refund_cents": True}, "integer"),
        ({"max_refund_cents": -1}, "integer"),
    ],
)
async def test_a_constraint_the_skill_does_not_honour_is_refused(
    mesh_for_module: Mesh, constraints: dict[str, str | int | bool], rule: str
) -> None:
    before = ledger_sums(mesh_for_module).get("O-1005")
    with pytest.raises(AccordError) as refused:
        await _ask(mesh_for_module, "refund order O-1005", _envelope("C-01", constraints))
    assert refused.value.code is ErrorCode.INVALID_INPUT
    assert refused.value.details.get("requirement") == "ENV-007"
    assert refused.value.details.get("rule") == rule
    assert ledger_sums(mesh_for_module).get("O-1005") == before


async def test_context_refs_reach_policy_check_as_evidence(mesh_for_module: Mesh) -> None:
    """A damage claim whose evidence is a context ref is judged without asking for evidence
    (policy-check read it); the limit keeps the mug unpaid for the test above. risk-check,
    which reads no refs, got none: it would have refused them."""
    view = await _ask(
        mesh_for_module,
        "my mug arrived broken, order O-1005",
        _envelope("C-01", {"max_refund_cents": 100}, ["photo IMG-2041: the handle broke off"]),
    )
    assert view.status is Status.COMPLETED, view  # not waiting for evidence
    assert (view.data or {})["rule"] == "amount_exceeds_limit", view.data


async def test_a_skill_that_reads_no_context_refs_refuses_them(mesh_for_module: Mesh) -> None:
    granted = sign_as("orchestrator", scopes=["refund.risk"])
    async with await A2AClient.connect(mesh_for_module.url("risk"), token=granted) as client:
        with pytest.raises(AccordError) as refused:
            await client.send(
                data={"order_id": "O-1001", "customer_id": "C-01"},
                skill="refund.risk",
                envelope=_envelope("C-01", {}, ["photo IMG-1"]),
            )
    assert refused.value.code is ErrorCode.INVALID_INPUT
    assert refused.value.details.get("requirement") == "ENV-008"
