"""The acting-on-behalf rule, one for both protocols: only a service may name a tenant (user or
app) other than its own credential's.

The A2A gate applies it to a message's delegation envelope
(:func:`accord.protocol.a2a.delegation.check_on_behalf`); a tool server applies it to the
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
        return
    if tenant.user != principal.subject or tenant.app != principal.app:
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            "only a service may act on behalf of another user",
            {"field": field, "requirement": requirement},
        )
