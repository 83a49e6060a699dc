"""Who may do what in the agents: one allow-list per operation, and nothing for anyone else.

A principal is granted what its *known* roles are granted in :data:`PERMISSIONS`; a role the
table does not name grants nothing, and adding a role to a token never takes a grant away or
widens one (a ``["customer", "beta"]`` token is a customer, no more). Each grant has a
:class:`Reach`, the customers it covers:

    operation        customer   service     approver
    check.order      own        delegated   -
    refund.request   own        delegated   -
    refund.approve   -          -           app (never their own refund)
    approvals.read   -          -           app
    stats.read       -          all         all

- ``own``: the principal's own subject, in its own app.
- ``delegated``: the customer the service's delegation envelope names (``envelope.tenant``);
  the gate has already checked that only a service may name another user. Anyone else's
  order is NOT_FOUND to the service, so a service cannot probe what exists.
- ``app``: the customers of the principal's own app; another app's refunds do not exist for it
  (NOT_FOUND, nothing leaked). An approver may never decide a refund whose customer (or task
  owner) is themselves.
- ``all``: aggregate figures with no customer's facts (the model metrics).

Approvers get nothing on ``check.order``: policy-check and risk-check read a customer's orders
and history from the (app-less) commerce tools, and the approval queue already shows an
approver the facts of the refunds they may decide.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import ROLE_APPROVER, ROLE_CUSTOMER, ROLE_SERVICE, Principal


class Operation(StrEnum):
    CHECK_ORDER = "check.order"  # policy-check, risk-check: a customer's order facts, history
    REQUEST_REFUND = "refund.request"  # the orchestrator: start a refund for a customer
    DECIDE_REFUND = "refund.approve"  # the orchestrator: approve or reject a waiting refund
    READ_APPROVALS = "approvals.read"  # GET /approvals, `accord tasks` as an approver
    READ_STATS = "stats.read"  # GET /stats, `accord stats`


class Reach(StrEnum):
    OWN = "own"
    DELEGATED = "delegated"
    APP = "app"
    ALL = "all"


def _grants(**by_role: Reach) -> Mapping[str, Reach]:
    return MappingProxyType(dict(by_role))


PERMISSIONS: Final[Mapping[Operation, Mapping[str, Reach]]] = MappingProxyType(
    {
        Operation.CHECK_ORDER: _grants(**{ROLE_CUSTOMER: Reach.OWN, ROLE_SERVICE: Reach.DELEGATED}),
        Operation.REQUEST_REFUND: _grants(
            **{ROLE_CUSTOMER: Reach.OWN, ROLE_SERVICE: Reach.DELEGATED}
        ),
        Operation.DECIDE_REFUND: _grants(**{ROLE_APPROVER: Reach.APP}),
        Operation.READ_APPROVALS: _grants(**{ROLE_APPROVER: Reach.APP}),
        Operation.READ_STATS: _grants(**{ROLE_APPROVER: Reach.ALL, ROLE_SERVICE: Reach.ALL}),
    }
)

# What a refused principal is told, per operation (the roles it would need are in the details).
_REFUSED: Final[Mapping[Operation, str]] = MappingProxyType(
    {
        Operation.CHECK_ORDER: "only a customer (for their own orders) or a service acting for "
        "one may check a refund",
        Operation.REQUEST_REFUND: "refunds are requested by a customer or a service acting for one",
        Operation.DECIDE_REFUND: "only a principal with the approver role may decide a refund",
        Operation.READ_APPROVALS: "only a principal with the approver role may read the queue",
        Operation.READ_STATS: "the metrics are for approvers and services",
    }
)


def reaches(principal: Principal, operation: Operation) -> frozenset[Reach]:
    """The reaches the principal's known roles are granted for ``operation`` (maybe none)."""
    grants = PERMISSIONS[operation]
    return frozenset(grants[role] for role in principal.roles if role in grants)


def require(principal: Principal, operation: Operation) -> frozenset[Reach]:
    """The principal's reaches for ``operation``; PERMISSION_DENIED when it has none."""
    granted = reaches(principal, operation)
    if not granted:
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            _REFUSED[operation],
            {"operation": operation.value, "requires_role": sorted(PERMISSIONS[operation])},
        )
    return granted


def require_customer(
    principal: Principal,
    operation: Operation,
    customer_id: str,
    envelope: DelegationEnvelope | None,
) -> None:
    """``principal`` may do ``operation`` for ``customer_id`` (an ``own`` or ``delegated``
    operation). Refused: PERMISSION_DENIED for a principal with no grant or an end user asking
    about someone else; NOT_FOUND for a service asking about anyone but the customer it acts
    for (it learns nothing about what exists)."""
    granted = require(principal, operation)
    if Reach.OWN in granted and principal.subject == customer_id:
        return
    if Reach.DELEGATED in granted:
        if envelope is not None and envelope.tenant.user == customer_id:
            return
        raise AccordError(
            ErrorCode.NOT_FOUND,
            "no such order for the customer this request acts for",
            {"field": "customer_id"},
        )
    raise AccordError(
        ErrorCode.PERMISSION_DENIED,
        "a customer may only check their own orders",
        {"field": "customer_id"},
    )


def refund_customer(principal: Principal, envelope: DelegationEnvelope) -> tuple[str, str]:
    """The (app, customer) a refund request is for: the tenant of a service's envelope, or the
    customer's own credential; PERMISSION_DENIED for anyone else."""
    granted = require(principal, Operation.REQUEST_REFUND)
    if Reach.DELEGATED in granted:
        return envelope.tenant.app, envelope.tenant.user
    return principal.app, principal.subject
