"""Who may make a tool call, and for whom: the contract's ``access`` section enforced.

:func:`authorize` runs inside :meth:`ToolServer.call` on every call, before the handler:

    caller ── stdio parent (no principal) ──────────────────────> trusted: arguments as given
       │ verified principal (HTTP gate)
       ├── no allow rule matches (role; a service's grant) ─────> PERMISSION_DENIED   (TOOL-011)
       ├── _meta delegation named by a non-service for another ─> PERMISSION_DENIED   (ENV-006)
       ├── customer: a customer's own subject, a service's delegation tenant user
       │     argument names someone else / service without one ─> PERMISSION_DENIED   (TOOL-012)
       ├── approver: the delegation's approved_by (services only)
       │     argument names another approver ───────────────────> PERMISSION_DENIED   (TOOL-012)
       └── app: the delegation's tenant app, else the credential's
             an app this server is not configured for ─────────> PERMISSION_DENIED
                                                     (ACCORD_TENANT_APPS, every call, stdio too)

"Another customer's order" stays NOT_FOUND (the data question, answered by the handler for the
verified customer, exactly like no order); "a call about another customer" is
PERMISSION_DENIED (the access question, answered before any data is read): neither tells the
caller anything about the other customer's data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from accord.contracts.envelope import Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import TOOL_DELEGATION_META_KEY
from accord.contracts.tool_access import CallerRole, ToolDelegation, parse_tool_delegation
from accord.contracts.tools import ToolContract
from accord.protocol.auth import DEFAULT_APP, Principal
from accord.protocol.on_behalf import check_acting_for
from accord.protocol.tenant_apps import check_tenant_app

DELEGATION_FIELD: Final = f"_meta.{TOOL_DELEGATION_META_KEY}"


@dataclass(frozen=True)
class Verified:
    """What the server verified about a call: the tenant app, customer and approver a handler
    may use."""

    app: str = DEFAULT_APP
    customer_id: str | None = None
    approved_by: str | None = None
    tenant: Tenant | None = None


def _denied(message: str, tool: str, requirement: str, **details: Any) -> AccordError:
    return AccordError(
        ErrorCode.PERMISSION_DENIED, message, {"tool": tool, "requirement": requirement, **details}
    )


def check_caller(contract: ToolContract, principal: Principal | None) -> None:
    """The allow-list alone (no argument read): PERMISSION_DENIED for a principal no rule
    names. ``None`` is the stdio parent process, which the transport trusts."""
    access = contract.access
    if principal is None or access is None:
        return
    if access.rule_for(principal.roles, principal.scopes) is None:
        raise _denied(
            f"{contract.name} may not be called by this principal "
            f"(allowed: {', '.join(_describe(r.role.value, r.scope) for r in access.allow)})",
            contract.name,
            "TOOL-011",
        )


def authorize(
    contract: ToolContract,
    principal: Principal | None,
    arguments: Mapping[str, Any],
    meta: Mapping[str, Any],
) -> Verified:
    """The verified customer and approver of a call whose arguments passed the input schema,
    or PERMISSION_DENIED / INVALID_INPUT (a malformed delegation)."""
    access = contract.access
    delegation = parse_tool_delegation(meta)
    if principal is not None and access is not None:
        check_caller(contract, principal)  # who may call at all, before whom it is about
    if principal is not None and delegation is not None:
        check_acting_for(
            principal, delegation.tenant, field=DELEGATION_FIELD, requirement="TOOL-012"
        )
    app = _app(principal, delegation)
    if access is None:
        # No access section (a third-party contract): any verified principal, arguments as given.
        return Verified(app=app, tenant=delegation.tenant if delegation else None)
    customer_arg = _argument(arguments, access.customer_field)
    approver_arg = _argument(arguments, access.approver_field)
    if principal is None:  # the stdio parent decides, as the MCP spec says of stdio
        return Verified(
            app=app,
            customer_id=customer_arg,
            approved_by=delegation.approved_by if delegation else approver_arg,
            tenant=delegation.tenant if delegation else None,
        )
    rule = access.rule_for(principal.roles, principal.scopes)
    assert rule is not None  # check_caller refused otherwise
    acting_as_service = rule.role is CallerRole.SERVICE
    customer = _customer(contract, principal, delegation, acting_as_service)
    if access.customer_field is not None and customer_arg != customer:
        raise _denied(
            f"{contract.name}: {access.customer_field} must be the customer this call is "
            "verified for",
            contract.name,
            "TOOL-012",
            field=access.customer_field,
        )
    approver = delegation.approved_by if (delegation and acting_as_service) else None
    if access.approver_field is not None and approver_arg is not None and approver_arg != approver:
        raise _denied(
            f"{contract.name}: {access.approver_field} must be the approver the delegation "
            "names (omit it: it is taken from the verified delegation)",
            contract.name,
            "TOOL-012",
            field=access.approver_field,
        )
    return Verified(
        app=app,
        customer_id=customer,
        approved_by=approver,
        tenant=delegation.tenant if delegation else None,
    )


def _app(principal: Principal | None, delegation: ToolDelegation | None) -> str:
    """The tenant app of a call, once its delegation passed the acting-on-behalf rule: the app
    the delegation names (a service's, or an end user's own), else the credential's (the demo
    app for the stdio parent); PERMISSION_DENIED for an app this server does not serve."""
    if delegation is not None:
        app, field = delegation.tenant.app, f"{DELEGATION_FIELD}.tenant.app"
    else:
        app, field = (principal.app if principal else DEFAULT_APP), "credential.app"
    check_tenant_app(app, field=field)
    return app


def _customer(
    contract: ToolContract,
    principal: Principal,
    delegation: ToolDelegation | None,
    acting_as_service: bool,
) -> str | None:
    if contract.access is None or contract.access.customer_field is None:
        return None
    if not acting_as_service:
        return principal.subject  # an end user is about themselves, whatever they name
    if delegation is None:
        raise _denied(
            f"{contract.name}: a service names the customer it acts for in "
            f"params._meta[{TOOL_DELEGATION_META_KEY!r}]",
            contract.name,
            "TOOL-012",
            field=DELEGATION_FIELD,
        )
    return delegation.tenant.user


def _argument(arguments: Mapping[str, Any], field_name: str | None) -> str | None:
    if field_name is None:
        return None
    value = arguments.get(field_name)
    return value if isinstance(value, str) else None


def _describe(role: str, scope: str | None) -> str:
    return f"{role} granted {scope}" if scope else role
