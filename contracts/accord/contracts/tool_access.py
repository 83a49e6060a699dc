"""Who may call a tool, and for whom: the ``access`` section of a tool contract, and the
delegation a caller names in ``params._meta`` of a call.

An allow-list, read by the tool server on every call over HTTP::

    access:
      customer_field: customer_id       # the input field that names the customer the call is about
      approver_field: approved_by       # optional: the input field that names the approver
      allow:
        - role: customer                # an end user, for themselves only
        - role: service                 # a service principal whose token carries the grant,
          scope: tickets.get           #   for the customer its delegation names

A principal that no rule allows is PERMISSION_DENIED before the tool runs. With a
``customer_field`` the customer comes from the verified call, never from the argument: a
customer's own subject, or the tenant user of a service's delegation (which only a service may
name, the acting-on-behalf rule of the A2A envelope); an argument that disagrees is refused.
An ``approver_field`` is taken from the delegation alone (set by the caller's runtime from a
verified approval, never by a model); an argument that disagrees is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from accord.contracts.envelope import Identifier, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import TOOL_DELEGATION_META_KEY
from accord.contracts.validation import first_broken

MAX_DELEGATION_BYTES: Final = 4 * 1024
GRANT: Final = r"^[A-Za-z0-9][A-Za-z0-9:._/-]{0,127}$"


class CallerRole(StrEnum):
    """The roles a tool's allow-list may name (the principals' roles, spelled once)."""

    CUSTOMER = "customer"
    SERVICE = "service"
    APPROVER = "approver"


class AccessRule(BaseModel):
    """One entry of the allow-list: a role, and for services the grant their token must carry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: CallerRole
    scope: str | None = Field(default=None, pattern=GRANT)

    @model_validator(mode="after")
    def _scope_for_services(self) -> AccessRule:
        if self.role is CallerRole.SERVICE and self.scope is None:
            raise ValueError("a service rule names the scope (grant) its token must carry")
        if self.role is not CallerRole.SERVICE and self.scope is not None:
            raise ValueError("only a service rule takes a scope")
        return self


class ToolAccess(BaseModel):
    """Who may call the tool (``allow``) and which input fields name whom the call is about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: list[AccessRule] = Field(min_length=1, max_length=16)
    customer_field: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")
    approver_field: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")

    def rule_for(self, roles: frozenset[str], scopes: frozenset[str]) -> AccessRule | None:
        """The first rule a principal with ``roles`` and ``scopes`` satisfies, else None."""
        for rule in self.allow:
            if rule.role.value in roles and (rule.scope is None or rule.scope in scopes):
                return rule
        return None

    @property
    def grants(self) -> list[str]:
        """The scopes services may be granted for this tool."""
        return [r.scope for r in self.allow if r.scope is not None]


class ToolDelegation(BaseModel):
    """What a service names in ``params._meta[TOOL_DELEGATION_META_KEY]`` of a tool call: the
    tenant it acts for and, for a write a person approved, the approver. Set by the caller's
    runtime from verified facts, never by a model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: Tenant
    approved_by: Identifier | None = None

    def to_meta(self) -> dict[str, Any]:
        return {TOOL_DELEGATION_META_KEY: self.model_dump(mode="json", exclude_none=True)}


def parse_tool_delegation(meta: Mapping[str, Any] | None) -> ToolDelegation | None:
    """The delegation in a call's ``_meta``, None when there is none; INVALID_INPUT when it is
    malformed (naming the field and the rule, never echoing the value)."""
    raw = (meta or {}).get(TOOL_DELEGATION_META_KEY)
    if raw is None:
        return None
    if not isinstance(raw, dict) or len(repr(raw)) > MAX_DELEGATION_BYTES:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"_meta[{TOOL_DELEGATION_META_KEY!r}] must be an object of at most "
            f"{MAX_DELEGATION_BYTES} bytes",
            {"field": f"_meta.{TOOL_DELEGATION_META_KEY}"},
        )
    try:
        return ToolDelegation.model_validate(raw)
    except ValidationError as exc:
        broken = first_broken(exc)
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"delegation field {broken.field!r}: {broken.message}",
            {"field": f"_meta.{TOOL_DELEGATION_META_KEY}.{broken.field}", "rule": broken.rule},
        ) from None
