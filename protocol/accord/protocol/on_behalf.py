"""The acting-on-behalf rule, one for both protocols: only a service may name a tenant (user or
app) other than its own credential's, and only for the apps its trust-table entry allows.

The A2A gate applies it to a message's delegation envelope
(:func:`accord.protocol.a2a.server.delegation.check_on_behalf`); a tool server applies it to the
delegation a call names in ``params._meta`` (accord.protocol.mcp.access).
"""

from __future__ import annotations

from accord.contracts.envelope import Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import Principal


def check_acting_for(principal: Principal, tenant: Tenant, *, field: str, requirement: str) -> None:
    """PERMISSION_DENIED (details: the ``field`` that named the tenant, the ``requirement``)
    unless ``principal`` is a service or ``tenant`` is its own."""
    if principal.is_service:
        if not principal.may_act_for_app(tenant.app):
            # The verifier's trust table names the tenant apps each service may act for.
            raise AccordError(
                ErrorCode.PERMISSION_DENIED,
                "this service may not act for that tenant app",
                {"field": field, "requirement": requirement},
            )
        return
    if tenant.user != principal.subject or tenant.app != principal.app:
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            "only a service may act on behalf of another user",
            {"field": field, "requirement": requirement},
        )
