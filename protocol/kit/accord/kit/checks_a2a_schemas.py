"""Kit checks of the skill schemas an agent's card names (AGENT-002): present, public,
cacheable, the agent's contract, and followed by what the agent answers.

Registered on the same :data:`A2A_CHECKS` list after the checks of checks_a2a.py (run_checks
imports this module), so the answer check reuses the probe conversation the others ran.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.errors import AccordError
from accord.contracts.keys import CARD_SKILL_SCHEMAS_PARAM, CONTRACT_EXTENSION_URI
from accord.contracts.origins import origin_of
from accord.contracts.schema_compare import schema_difference
from accord.contracts.skill_schemas import skill_schema_document
from accord.kit.a2a_context import DOCUMENT_KEY, A2AContext
from accord.kit.a2a_wire import task_of
from accord.kit.checks_a2a import A2A_CHECKS
from accord.kit.model import Skipped, Violation

check = A2A_CHECKS


def _ref(ctx: A2AContext) -> tuple[str, str]:
    ext = ctx.extension(CONTRACT_EXTENSION_URI) or {}
    params = ext.get("params")
    value = params.get(CARD_SKILL_SCHEMAS_PARAM) if isinstance(params, Mapping) else None
    url = value.get("url") if isinstance(value, Mapping) else None
    digest = value.get("sha256") if isinstance(value, Mapping) else None
    if not isinstance(url, str) or not isinstance(digest, str) or not url or not digest:
        raise Violation(
            f"the contract extension's params lack {CARD_SKILL_SCHEMAS_PARAM} "
            '{"url", "sha256"}: a client cannot find the skill schemas from the card',
            received=params,
        )
    try:
        same = origin_of(url) == origin_of(ctx.target)
    except AccordError:
        same = False
    if not same:
        raise Violation(
            f"{CARD_SKILL_SCHEMAS_PARAM}.url {url!r} is not on the card's origin "
            f"({ctx.target}); clients refuse to follow it",
            received=value,
        )
    return url, digest.lower()


def _schema_problems(doc: Any, skills: list[str]) -> list[str]:
    listed = doc.get("skills") if isinstance(doc, Mapping) else None
    if not isinstance(listed, Mapping):
        return ["the document has no 'skills' object"]
    problems = []
    if sorted(listed) != sorted(skills):
        problems.append(f"its skills {sorted(listed)} are not the card's {sorted(skills)}")
    for skill, pair in listed.items():
        for side in ("input", "output"):
            schema = pair.get(side) if isinstance(pair, Mapping) else None
            if not isinstance(schema, Mapping):
                problems.append(f"{skill}: no {side} schema")
                continue
            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as exc:
                problems.append(f"{skill} {side}: not a JSON Schema 2020-12 ({exc.message})")
    return problems


def _contract_problems(ctx: A2AContext, doc: Mapping[str, Any]) -> list[str]:
    """For an agent that says it is one of Accord's shipped agents, at that agent's version:
    the schemas must be that contract's, exactly."""
    contract = shipped_agent_contracts().get(str(ctx.card.get("name")))
    if contract is None or contract.version != ctx.card.get("version"):
        return []
    served = doc.get("skills")
    served = served if isinstance(served, Mapping) else {}
    for skill, want in skill_schema_document(contract)["skills"].items():
        entry = served.get(skill)
        got: Mapping[str, Any] = entry if isinstance(entry, Mapping) else {}
        # Schemas compare as every checker compares them (documentation keywords aside);
        # the access and envelope sections are data, compared exactly.
        diff = next(
            (
                (side, d)
                for side in ("input", "output")
                if (d := schema_difference(want[side], got.get(side))) is not None
            ),
            None,
        )
        rest = {k: v for k, v in want.items() if k not in ("input", "output")}
        if diff is not None or set(got) != set(want) or rest != {k: got[k] for k in rest}:
            where = f" ({skill} {diff[0]} at {diff[1][0]})" if diff else f" ({skill})"
            return [
                f"the schemas are not those of the {contract.name} {contract.version} "
                f"contract{where}"
            ]
    return []


@check("AGENT-002", "card names its skills' input and output schemas, public and cacheable")
async def skill_schemas_published(ctx: A2AContext) -> None:
    url, digest = _ref(ctx)
    response = await ctx.wire.client.get(url)  # no credential: public, like the card
    sent = {"GET": url}
    if response.status_code != 200:
        raise Violation(
            f"GET {url} without a credential is HTTP {response.status_code}, not 200",
            sent=sent,
            received={"http": response.status_code, "body": response.text[:500]},
        )
    got = hashlib.sha256(response.content).hexdigest()
    if got != digest:
        raise Violation(
            f"the document's sha256 is {got}, the card names {digest}", sent=sent, expected=digest
        )
    etag, cache = response.headers.get("etag"), response.headers.get("cache-control")
    if not etag or not cache:
        raise Violation(
            "the document is served without ETag and Cache-Control",
            sent=sent,
            received=dict(response.headers),
        )
    again = await ctx.wire.client.get(url, headers={"If-None-Match": etag})
    if again.status_code != 304:
        raise Violation(
            f"GET with If-None-Match: {etag} is HTTP {again.status_code}, not 304",
            sent={**sent, "If-None-Match": etag},
            received={"http": again.status_code},
        )
    try:
        doc = response.json()
    except ValueError:
        raise Violation("the document is not JSON", sent=sent) from None
    problems = _schema_problems(doc, ctx.skill_ids()) or _contract_problems(ctx, doc)
    if problems:
        raise Violation("; ".join(problems), sent=sent, received=doc)
    ctx.remember(DOCUMENT_KEY, doc)


def _data_parts(task: Mapping[str, Any]) -> list[Any]:
    return [
        part["data"]
        for artifact in task.get("artifacts") or []
        if isinstance(artifact, Mapping)
        for part in artifact.get("parts") or []
        if isinstance(part, Mapping) and "data" in part
    ]


@check("AGENT-002", "the skill's answer follows the output schema its card names")
async def answer_follows_schema(ctx: A2AContext) -> None:
    doc = ctx.recall(DOCUMENT_KEY)
    if not isinstance(doc, Mapping):
        raise Skipped("the skill schemas were not read (see the check before)")
    run = await ctx.probe_run()
    answer = await ctx.get_task(run.task_id)
    task = task_of(answer.result) or {}
    data = _data_parts(task)
    if not data:
        raise Skipped(f"the probe for {run.skill} produced no DataPart artifact to judge")
    validator = Draft202012Validator(doc["skills"][run.skill]["output"])
    if any(validator.is_valid(value) for value in data):
        return
    error = next(iter(validator.iter_errors(data[0])))
    raise Violation(
        f"no DataPart of the {run.skill} answer follows its output schema: {error.message}",
        sent=answer.sent,
        received=data,
        expected="the skill's output schema from the card",
    )
