"""Who may delegate what: the acting-on-behalf rule, and the envelope of a request that brings
none.

The gate applies :func:`check_on_behalf` to the envelope of every message before the SDK
creates a task; the turn reader applies it to the envelope a task stored at its first turn.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.protocol.auth import Principal
from accord.protocol.on_behalf import check_acting_for
from accord.protocol.settings import current

DEFAULT_BUDGET_UNITS: Final = 100
DEFAULT_BUDGET_TOOL_CALLS: Final = 50


def check_on_behalf(principal: Principal, envelope: DelegationEnvelope) -> None:
    """Only a service may name a tenant user (or app) other than its own credential's (the one
    rule, :func:`accord.protocol.on_behalf.check_acting_for`; tool servers apply it too)."""
    check_acting_for(principal, envelope.tenant, field="envelope.tenant", requirement="ENV-004")


def turn_deadline_s() -> float:
    """Deadline of one turn of an end user's request that brought no envelope
    (``ACCORD_TURN_DEADLINE_S``, default five minutes)."""
    return current().turn_deadline_s


def default_envelope(principal: Principal, session: str, goal: str) -> DelegationEnvelope:
    """The envelope an end user's request gets when it brings none: its own tenant, a sane
    budget (100 units, 50 tool calls, five minutes)."""
    deadline = datetime.now(UTC) + timedelta(seconds=turn_deadline_s())
    values: dict[str, Any] = {
        "goal": goal[:2000] or "request",
        "budget": Budget(
            units=DEFAULT_BUDGET_UNITS, tool_calls=DEFAULT_BUDGET_TOOL_CALLS, deadline=deadline
        ),
        "tenant": {"app": principal.app, "user": principal.subject, "session": session},
    }
    try:
        return DelegationEnvelope.model_validate(values)
    except ValueError:
        # A subject outside the identifier pattern (an API key's) still gets a budget.
        tenant = Tenant.model_construct(app=principal.app, user=principal.subject, session=session)
        return DelegationEnvelope.model_construct(
            goal=values["goal"],
            constraints={},
            budget=values["budget"],
            context_refs=[],
            tenant=tenant,
            parent_task=None,
            traceparent=None,
        )
