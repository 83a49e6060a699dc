"""The permission table: allow-lists per operation, nothing for unknown roles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from accord.agents.permissions import (
    PERMISSIONS,
    Operation,
    Reach,
    reaches,
    refund_customer,
    require,
    require_customer,
)
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import Principal


def _who(subject: str, *roles: str, app: str = "accord") -> Principal:
    return Principal(subject=subject, roles=frozenset(roles), app=app)


def _for(user: str, app: str = "accord") -> DelegationEnvelope:
    return DelegationEnvelope(
        goal="g",
        budget=Budget(units=1, tool_calls=1, deadline=datetime.now(UTC) + timedelta(minutes=1)),
        tenant=Tenant(app=app, user=user, session="s"),
    )


def test_every_operation_has_a_row_and_the_table_is_read_only() -> None:
    assert set(PERMISSIONS) == set(Operation)
    with pytest.raises(TypeError):
        PERMISSIONS[Operation.READ_STATS] = {}  # type: ignore[index]


@pytest.mark.parametrize("operation", list(Operation))
def test_unknown_roles_grant_nothing(operation: Operation) -> None:
    assert reaches(_who("C-01", "beta", "admin"), operation) == frozenset()
    with pytest.raises(AccordError) as refused:
        require(_who("C-01", "beta"), operation)
    assert refused.value.code is ErrorCode.PERMISSION_DENIED


def test_an_extra_role_neither_adds_nor_removes() -> None:
    assert reaches(_who("C-01", "customer", "beta"), Operation.CHECK_ORDER) == {Reach.OWN}


@pytest.mark.parametrize(
    ("principal", "customer", "envelope", "code"),
    [
        (_who("C-01", "customer"), "C-01", None, None),
        (_who("C-01", "customer", "beta"), "C-03", None, ErrorCode.PERMISSION_DENIED),
        (_who("C-01", "approver"), "C-01", None, ErrorCode.PERMISSION_DENIED),
        (_who("svc:o", "service"), "C-03", _for("C-03"), None),
        (_who("svc:o", "service"), "C-03", _for("C-04"), ErrorCode.NOT_FOUND),
        (_who("svc:o", "service"), "C-03", None, ErrorCode.NOT_FOUND),
    ],
)
def test_check_order_reach(
    principal: Principal,
    customer: str,
    envelope: DelegationEnvelope | None,
    code: ErrorCode | None,
) -> None:
    if code is None:
        require_customer(principal, Operation.CHECK_ORDER, customer, envelope)
        return
    with pytest.raises(AccordError) as refused:
        require_customer(principal, Operation.CHECK_ORDER, customer, envelope)
    assert refused.value.code is code


def test_a_refund_is_for_the_customer_or_the_envelopes_tenant() -> None:
    assert refund_customer(_who("C-01", "customer", app="shop"), _for("C-01", "shop")) == (
        "shop",
        "C-01",
    )
    assert refund_customer(_who("svc:o", "service"), _for("C-04", "shop")) == ("shop", "C-04")
    with pytest.raises(AccordError) as refused:
        refund_customer(_who("C-02", "approver"), _for("C-02"))
    assert refused.value.code is ErrorCode.PERMISSION_DENIED
