"""Permissions are allow-lists: a role the table does not name grants nothing.

Found against a running mesh (issue #12): ``check_subject`` refused only principals whose roles
were a subset of ``{customer}``, so a customer token with one extra role (``["customer",
"beta"]``) read other customers' order facts through policy-check and risk-check. Now one table
(accord.agents.permissions, docs/security-a2a.md) says who may do what: a customer their own
orders, a service only the customer its delegation envelope names (anyone else's is NOT_FOUND,
issue #13), and every other role nothing. A role outside the known set does not even get in:
the token is refused at the door (UNAUTHENTICATED, docs/security-tokens.md), so an extra role
can never widen a grant. Real processes: the security session's shared mesh (conftest.py);
nothing here writes (refusals, checks, /stats status codes).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from accord.agents.refund.peers import peer_grants
from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.auth import mint_token
from tests.mesh.support import SECRET, Mesh
from tests.protocol.a2a_client.support import envelope
from tests.support.service_keys import TEST_SERVICE, sign_as

pytestmark = pytest.mark.timeout(300)

# C-03's laptop order: the facts an attacker holding C-01's token wants.
OTHERS_ORDER = {"order_id": "O-1004", "customer_id": "C-03", "reason": "changed_mind"}
OTHERS_RISK = {"order_id": "O-1004", "customer_id": "C-03"}


def _token(subject: str, *roles: str) -> str:
    if "service" in roles:  # a service's token is signed by its own key (issue #30)
        return sign_as(subject.removeprefix("svc:"), roles=list(roles))
    return mint_token(subject, roles, secret=SECRET)


def _orchestrator() -> str:
    """The orchestrator's token: granted policy-check's and risk-check's skills (AGENT-009)."""
    return sign_as("orchestrator", scopes=peer_grants())


async def _send(
    mesh: Mesh,
    service: str,
    bearer: str,
    data: dict[str, Any],
    on_behalf: DelegationEnvelope | None = None,
    skill: str | None = None,
) -> TaskView:
    async with await A2AClient.connect(mesh.url(service), token=bearer) as agent:
        return await agent.send(data=data, envelope=on_behalf, skill=skill)


def _code(view: TaskView) -> ErrorCode | None:
    return view.error.code if view.error is not None else None


async def _refusal(
    mesh: Mesh, service: str, bearer: str, data: dict[str, Any], skill: str | None = None
) -> tuple[ErrorCode | None, TaskView | None]:
    """The code a request was refused with (at the door or by the agent), and the task if any."""
    try:
        view = await _send(mesh, service, bearer, data, skill=skill)
    except AccordError as refused:
        return refused.code, None
    return _code(view), view


UNKNOWN_ROLES = [("customer", "beta"), ("beta",), ()]


@pytest.mark.parametrize("service", ["policy", "risk"])
@pytest.mark.parametrize("roles", [*UNKNOWN_ROLES, ("approver",)])
async def test_no_extra_or_unknown_role_reads_another_customers_order(
    mesh: Mesh, service: str, roles: tuple[str, ...]
) -> None:
    data = OTHERS_ORDER if service == "policy" else OTHERS_RISK
    code, view = await _refusal(mesh, service, _token("C-01", *roles), data)
    expected = ErrorCode.UNAUTHENTICATED if roles in UNKNOWN_ROLES else ErrorCode.PERMISSION_DENIED
    assert code is expected
    assert view is None or (view.status is Status.FAILED and view.data is None)


@pytest.mark.parametrize("service", ["policy", "risk"])
async def test_a_customer_checks_their_own_order(mesh: Mesh, service: str) -> None:
    data = {"order_id": "O-1001", "customer_id": "C-01"}
    if service == "policy":
        data["reason"] = "wrong_size"
    view = await _send(mesh, service, _token("C-01", "customer"), data)
    assert view.status is Status.COMPLETED, view.error


@pytest.mark.parametrize("service", ["policy", "risk"])
async def test_a_service_reads_only_the_customer_its_envelope_names(
    mesh: Mesh, service: str
) -> None:
    data = OTHERS_ORDER if service == "policy" else OTHERS_RISK
    service_token = _orchestrator()
    # Acting for C-04, asking about C-03's order: as if it did not exist.
    view = await _send(mesh, service, service_token, data, envelope("C-04"))
    assert _code(view) is ErrorCode.NOT_FOUND
    assert view.data is None
    # Acting for C-03 itself: answered.
    own = await _send(mesh, service, service_token, data, envelope("C-03"))
    assert own.status is Status.COMPLETED, own.error


async def test_risk_check_never_scores_another_customers_order_for_a_service(
    mesh: Mesh,
) -> None:
    """Issue 13: risk-check, called by a service acting for C-04 about C-01's order O-1001
    (naming C-04 as the customer and bringing the amount, so nothing else is looked up), must
    not evaluate it: NOT_FOUND, as if the order did not exist."""
    service_token = _orchestrator()
    data = {"order_id": "O-1001", "customer_id": "C-04", "amount_cents": 1000}
    view = await _send(mesh, "risk", service_token, data, envelope("C-04"))
    assert _code(view) is ErrorCode.NOT_FOUND
    assert view.data is None
    # The same service acting for C-01 about C-01's own order: answered.
    own = {"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 1000}
    answered = await _send(mesh, "risk", service_token, own, envelope("C-01"))
    assert answered.status is Status.COMPLETED, answered.error


@pytest.mark.parametrize("roles", [("beta",), ("approver",)])
async def test_the_orchestrator_starts_refunds_for_customers_and_services_only(
    mesh: Mesh, roles: tuple[str, ...]
) -> None:
    # A subject that looks like a customer's is not enough: the role must grant it.
    code, _ = await _refusal(
        mesh,
        "orchestrator",
        _token("C-02", *roles),
        {"text": "refund order O-1002, it does not fit"},
        skill="refund.request",
    )
    expected = ErrorCode.UNAUTHENTICATED if roles in UNKNOWN_ROLES else ErrorCode.PERMISSION_DENIED
    assert code is expected


def _stats_token(roles: tuple[str, ...]) -> str:
    return _token(f"svc:{TEST_SERVICE}" if roles == ("service",) else "x-1", *roles)


@pytest.mark.parametrize(
    ("roles", "status"),
    [
        (("customer", "beta"), 401),
        (("beta",), 401),
        (("customer",), 403),
        (("approver",), 200),
        (("service",), 200),
    ],
)
def test_stats_follow_the_table(mesh: Mesh, roles: tuple[str, ...], status: int) -> None:
    answer = httpx.get(
        mesh.orchestrator + "/stats",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {_stats_token(roles)}"},
        timeout=30,
    )
    assert answer.status_code == status, answer.text
