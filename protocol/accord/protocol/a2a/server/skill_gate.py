"""Who may ask for a skill, and with what envelope: the skill's contract applied to a request
before any work (AGENT-009, ENV-007, ENV-008).

The gate calls :func:`admit` for the first message of a task, before the SDK creates (and
stores) one; the turn reader calls it again for every turn, so a continuation that brings a new
envelope is held to the same rules. The grants are the verified principal's
(:attr:`Principal.scopes`, whatever the credential layer puts there), never the message's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accord.contracts.agents import Skill
from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import CONTRACT_VERSION_META_KEY, SKILL_META_KEY
from accord.contracts.served import ServedContracts
from accord.contracts.skill_access import SkillRule
from accord.protocol.auth import Principal


def admit(skill: Skill, principal: Principal, envelope: DelegationEnvelope | None) -> None:
    """PERMISSION_DENIED unless the skill's ``access`` admits ``principal`` for the tenant the
    envelope names; INVALID_INPUT for a constraint or context refs the skill does not honour."""
    check_access(skill, principal, envelope)
    if envelope is not None:
        skill.envelope.check(skill.id, envelope.constraints, list(envelope.context_refs))


def check_access(
    skill: Skill, principal: Principal, envelope: DelegationEnvelope | None
) -> SkillRule | None:
    """The rule that admits ``principal`` (None: the skill has no access section, so any
    verified principal); PERMISSION_DENIED when none does."""
    access = skill.access
    if access is None:
        return None
    for_itself = envelope is None or (
        envelope.tenant.user == principal.subject and envelope.tenant.app == principal.app
    )
    rule = access.rule_for(principal.roles, principal.scopes, for_itself=for_itself)
    if rule is None:
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            f"skill {skill.id} may not be asked for by this principal "
            f"(allowed: {', '.join(r.describe() for r in access.allow)})",
            {"skill": skill.id, "requirement": "AGENT-009"},
        )
    return rule


def skill_asked(served: ServedContracts, metadata: Mapping[str, Any] | None) -> Skill | None:
    """The skill a new task's message asks for (its metadata as JSON), in the contract version
    it names; None when the message names no skill or version this agent has (the turn reader
    then refuses it with the usual INVALID_INPUT / VERSION_UNSUPPORTED)."""
    meta = metadata or {}
    version = meta.get(CONTRACT_VERSION_META_KEY)
    try:
        contract = served.speaking(version if isinstance(version, str) else None)
    except AccordError:
        return None
    skill_id = meta.get(SKILL_META_KEY)
    if not skill_id:
        return contract.skills[0]
    try:
        return contract.skill(str(skill_id))
    except KeyError:
        return None
