"""Who may ask an agent for a skill, and for whom: the ``access`` section of a skill in an agent
contract (contract 1.3, requirement AGENT-009).

An allow-list, like a tool's (:mod:`accord.contracts.tool_access`), read by the agent's A2A gate
before any work::

    access:
      allow:
        - role: customer              # an end user, for themselves only
        - role: service               # a service whose verified grants include the scope,
          scope: ticket.route         #   for the tenant its delegation envelope names
          tenant: delegated

``tenant`` says for whom a rule admits the caller: ``own`` (the envelope, if any, names the
caller itself: the only choice for people) or ``delegated`` (a service acting for the tenant
its envelope names, under the acting-on-behalf rule, ENV-006). A principal no rule admits is
PERMISSION_DENIED, and nothing is created. A skill without an ``access`` section (a contract
written before 1.3) admits every verified principal, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from accord.contracts.tool_access import GRANT, CallerRole


class TenantReach(StrEnum):
    """For whom a rule admits the caller."""

    OWN = "own"  # the caller itself (an envelope naming anyone else does not match the rule)
    DELEGATED = "delegated"  # the tenant a service's envelope names (services only)


class SkillRule(BaseModel):
    """One entry of a skill's allow-list: a role; for services the grant their verified
    credential must carry, and whether they may act for another tenant."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: CallerRole
    scope: str | None = Field(default=None, pattern=GRANT)
    tenant: TenantReach = TenantReach.OWN

    @model_validator(mode="after")
    def _service_rules(self) -> SkillRule:
        if self.role is CallerRole.SERVICE and self.scope is None:
            raise ValueError("a service rule names the scope (grant) its credential must carry")
        if self.role is not CallerRole.SERVICE and self.scope is not None:
            raise ValueError("only a service rule takes a scope")
        if self.role is not CallerRole.SERVICE and self.tenant is TenantReach.DELEGATED:
            raise ValueError("only a service may act for another tenant (tenant: delegated)")
        return self

    def admits(self, roles: Iterable[str], scopes: Iterable[str], *, for_itself: bool) -> bool:
        """Whether a principal with ``roles`` and ``scopes`` matches this rule, asking for
        itself (``for_itself``) or for another tenant."""
        if self.role.value not in set(roles):
            return False
        if self.scope is not None and self.scope not in set(scopes):
            return False
        return for_itself or self.tenant is TenantReach.DELEGATED

    def describe(self) -> str:
        if self.scope is None:
            return self.role.value
        reach = " for another tenant" if self.tenant is TenantReach.DELEGATED else ""
        return f"{self.role.value} granted {self.scope}{reach}"


class SkillAccess(BaseModel):
    """Who may ask for the skill (``allow``: the first rule that admits the caller wins)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: list[SkillRule] = Field(min_length=1, max_length=16)

    def rule_for(
        self, roles: Iterable[str], scopes: Iterable[str], *, for_itself: bool
    ) -> SkillRule | None:
        """The first rule that admits the principal, else None."""
        roles, scopes = frozenset(roles), frozenset(scopes)
        for rule in self.allow:
            if rule.admits(roles, scopes, for_itself=for_itself):
                return rule
        return None

    @property
    def grants(self) -> list[str]:
        """The scopes a service may be granted for this skill."""
        return [r.scope for r in self.allow if r.scope is not None]
