"""Kit checks of who may ask for each skill (AGENT-009) and which envelope constraints a skill
honours (ENV-007), read from the skill schema document the card names.

Registered on :data:`A2A_CHECKS` after the schema checks (run_checks imports this module), so
they read the document the first schema check kept. The kit cannot mint credentials: it probes
with the ones it was given (``--token``, ``--other-token``), reading who each says it is from
its claims, and asks only for a skill whose ``access`` does not admit that principal.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError

from accord.contracts.errors import ErrorCode
from accord.contracts.skill_access import SkillAccess
from accord.contracts.skill_envelope import EnvelopeUse
from accord.contracts.tool_access import CallerRole
from accord.kit.a2a_context import DOCUMENT_KEY, A2AContext, _tenant
from accord.kit.a2a_wire import Exchange, error_code_of, task_of, user_message
from accord.kit.checks_a2a import A2A_CHECKS
from accord.kit.checks_a2a_schemas import skill_schemas_published  # noqa: F401 - runs first
from accord.kit.model import Skipped, Violation
from accord.kit.options import Credential
from accord.kit.probes import fill

check = A2A_CHECKS
UNDECLARED: Final = "accord_contract_test_undeclared"


def _document_skills(ctx: A2AContext) -> Mapping[str, Any]:
    doc = ctx.recall(DOCUMENT_KEY)
    skills = doc.get("skills") if isinstance(doc, Mapping) else None
    if not isinstance(skills, Mapping):
        raise Skipped("the skill schemas were not read (see the schema checks)")
    return skills


@check("AGENT-009", "the skill schema document states who may ask for each skill")
async def access_stated(ctx: A2AContext) -> None:
    problems = []
    for skill, entry in _document_skills(ctx).items():
        access = entry.get("access") if isinstance(entry, Mapping) else None
        if access is None:
            problems.append(f"{skill}: no access section")
            continue
        try:
            SkillAccess.model_validate(access)
        except ValidationError as exc:
            problems.append(f"{skill}: access is malformed ({exc.errors()[0]['msg']})")
    if problems:
        raise Violation(
            "; ".join(problems),
            expected="each skill names its allow-list: roles, a service's grant, its tenant reach",
        )


def _claims(credential: Credential) -> dict[str, Any] | None:
    if not credential.token:
        return None  # an API key's principal cannot be read from outside
    return credential.claims() or None


def _refused_skill(ctx: A2AContext, credential: Credential) -> tuple[str, str | None] | None:
    """A skill the credential's principal is not admitted to (and the customer its envelope
    then acts for), or None."""
    claims = _claims(credential)
    if claims is None:
        return None
    roles = [str(r) for r in claims.get("roles") or []]
    if CallerRole.SERVICE.value in roles and "scope" not in claims:
        return None  # its grants are the verifier's trust table's: unknown from outside
    scopes = str(claims.get("scope") or "").split()
    for skill, entry in _document_skills(ctx).items():
        access = entry.get("access") if isinstance(entry, Mapping) else None
        if access is None:
            continue
        probe = ctx.options.probes.agents.get(skill)
        acts_for = probe.acts_for if probe is not None else None
        app, user = _tenant(credential, acts_for)
        for_itself = user == claims.get("sub") and app == (claims.get("app") or app)
        rule = SkillAccess.model_validate(access).rule_for(roles, scopes, for_itself=for_itself)
        if rule is None:
            return skill, acts_for
    return None


def _envelope(ctx: A2AContext, credential: Credential, acts_for: str | None) -> dict[str, Any]:
    envelope = ctx.envelope(acts_for)
    app, user = _tenant(credential, acts_for)
    envelope["tenant"] = {**envelope["tenant"], "app": app, "user": user}
    return envelope


@check("AGENT-009", "a principal the skill's access does not admit is PERMISSION_DENIED")
async def access_refuses(ctx: A2AContext) -> None:
    for credential in (ctx.options.credential, ctx.options.other):
        if not credential.present:
            continue
        found = _refused_skill(ctx, credential)
        if found is None:
            continue
        skill, acts_for = found
        probe = ctx.options.probes.agents.get(skill)
        data = fill(probe.message, ctx.run) if probe is not None else {}
        meta = {**ctx.metadata(None, skill, _envelope(ctx, credential, acts_for))}
        answer = await ctx.rpc(
            "SendMessage",
            {"message": user_message(data, metadata=meta)},
            credential.headers(),
        )
        _expect_refused(answer, ErrorCode.PERMISSION_DENIED, skill)
        return
    raise Skipped(
        "every credential given is admitted to every skill: pass an --other-token the "
        "skills' access does not admit"
    )


@check("ENV-007", "a constraint the skill does not declare is INVALID_INPUT")
async def undeclared_constraint(ctx: A2AContext) -> None:
    skills = _document_skills(ctx)
    skill, probe = ctx.pick_probe()
    entry = skills.get(skill)
    declared = entry.get("envelope") if isinstance(entry, Mapping) else None
    try:
        EnvelopeUse.model_validate(declared or {})
    except ValidationError as exc:
        raise Violation(
            f"{skill}: the envelope section is malformed ({exc.errors()[0]['msg']})",
            received=declared,
        ) from None
    envelope = ctx.envelope(probe.acts_for)
    envelope["constraints"] = {UNDECLARED: 1}
    message = user_message(
        fill(probe.message, ctx.run), metadata=ctx.metadata(probe, skill, envelope)
    )
    message["messageId"] = uuid.uuid4().hex
    answer = await ctx.rpc("SendMessage", {"message": message})
    _expect_refused(answer, ErrorCode.INVALID_INPUT, skill)


def _expect_refused(answer: Exchange, code: ErrorCode, skill: str) -> None:
    expected = f"{code.value} as an error answer, before any task is created"
    found = error_code_of(answer.error)
    if found is code:
        return
    task = task_of(answer.result)
    raise Violation(
        f"asking for {skill}: "
        + (
            f"a task was created ({task.get('id')})"
            if task
            else f"answered {found.value if found else answer.error or 'without an error'}"
        ),
        sent=answer.sent,
        received=answer.shown(),
        expected=expected,
    )
