"""Skill schemas from the card alone: a real `accord serve policy` names them in its contract
extension, serves them publicly with an ETag, and the Python helper fetches and checks them."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from a2a.client.card_resolver import parse_agent_card

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.export import schema_documents
from accord.contracts.keys import CARD_SKILL_SCHEMAS_PARAM, CONTRACT_EXTENSION_URI
from accord.protocol.a2a.client.card import ResolvedCard, resolve_card
from accord.protocol.a2a.client.schemas import fetch_skill_schemas, schemas_ref
from tests.protocol.a2a_client.support import policy_service
from tests.support.processes import Service

CONTRACT = shipped_agent_contracts()["policy-check"]


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("schemas-policy")
    (root / "logs").mkdir()
    with policy_service(root / "data", root / "logs") as svc:
        yield svc


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10.0) as client:
        yield client


def _edited(card: ResolvedCard, **ref: str) -> ResolvedCard:
    """The same card with its ``skillSchemas`` param changed (as a tampering agent would)."""
    raw = copy.deepcopy(card.raw)
    for ext in raw["capabilities"]["extensions"]:
        if ext["uri"] == CONTRACT_EXTENSION_URI:
            ext["params"][CARD_SKILL_SCHEMAS_PARAM].update(ref)
    return ResolvedCard(url=card.url, raw=raw, card=parse_agent_card(copy.deepcopy(raw)))


async def test_the_card_names_public_cacheable_schemas_that_are_the_contracts(
    policy: Service, http: httpx.AsyncClient
) -> None:
    card = await resolve_card(http, policy.url)
    ref = schemas_ref(card)
    assert ref is not None
    assert ref.url == policy.url.rstrip("/") + "/accord/skill-schemas.json"
    plain = await http.get(ref.url)  # no credential, like the card
    assert plain.status_code == 200
    assert plain.headers["content-type"].startswith("application/json")
    assert hashlib.sha256(plain.content).hexdigest() == ref.sha256
    assert plain.headers["etag"] == f'"{ref.sha256}"'
    assert "max-age=" in plain.headers["cache-control"]
    doc = plain.json()
    assert (doc["agent"], doc["version"]) == (CONTRACT.name, CONTRACT.version)
    assert {k: {"input": v["input"], "output": v["output"]} for k, v in doc["skills"].items()} == {
        s.id: {"input": s.input_schema, "output": s.output_schema} for s in CONTRACT.skills
    }
    # Contract 1.3: who may ask for each skill, and what of the envelope it honours.
    for s in CONTRACT.skills:
        assert doc["skills"][s.id].get("access") == (
            s.access.model_dump(mode="json") if s.access else None
        )
        assert doc["skills"][s.id]["envelope"] == s.envelope.model_dump(
            mode="json", exclude_none=True
        )
    exported = schema_documents()
    assert doc["schemas"] == {
        "error": exported["error.schema.json"],
        "status": exported["status.schema.json"],
    }


async def test_a_matching_etag_is_not_modified(policy: Service, http: httpx.AsyncClient) -> None:
    card = await resolve_card(http, policy.url)
    ref = schemas_ref(card)
    assert ref is not None
    again = await http.get(ref.url, headers={"If-None-Match": f'W/"x", "{ref.sha256}"'})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == f'"{ref.sha256}"'
    other = await http.get(ref.url, headers={"If-None-Match": '"something-else"'})
    assert other.status_code == 200


async def test_the_helper_hands_back_each_skills_schemas(
    policy: Service, http: httpx.AsyncClient
) -> None:
    schemas = await fetch_skill_schemas(http, await resolve_card(http, policy.url))
    assert schemas.skills == [s.id for s in CONTRACT.skills]
    skill = CONTRACT.skills[0]
    assert schemas.input(skill.id) == skill.input_schema
    assert schemas.output(skill.id) == skill.output_schema
    assert schemas.shared("error")["required"] == ["code", "retry", "message"]
    with pytest.raises(AccordError) as unknown:
        schemas.input("no.such.skill")
    assert unknown.value.code is ErrorCode.NOT_FOUND


async def test_bytes_other_than_the_cards_digest_are_refused(
    policy: Service, http: httpx.AsyncClient
) -> None:
    card = _edited(await resolve_card(http, policy.url), sha256="0" * 64)
    with pytest.raises(AccordError) as refused:
        await fetch_skill_schemas(http, card)
    assert refused.value.code is ErrorCode.CONTRACT_VIOLATION


async def test_schemas_on_another_origin_are_not_fetched(
    policy: Service, http: httpx.AsyncClient
) -> None:
    card = _edited(
        await resolve_card(http, policy.url), url="http://127.0.0.2:9/accord/skill-schemas.json"
    )
    with pytest.raises(AccordError) as refused:
        await fetch_skill_schemas(http, card)
    assert refused.value.code is ErrorCode.PERMISSION_DENIED


async def test_a_card_without_schemas_is_not_found(
    policy: Service, http: httpx.AsyncClient
) -> None:
    card = await resolve_card(http, policy.url)
    raw = copy.deepcopy(card.raw)
    for ext in raw["capabilities"]["extensions"]:
        ext.get("params", {}).pop(CARD_SKILL_SCHEMAS_PARAM, None)
    bare = ResolvedCard(url=card.url, raw=raw, card=parse_agent_card(copy.deepcopy(raw)))
    assert schemas_ref(bare) is None
    with pytest.raises(AccordError) as missing:
        await fetch_skill_schemas(http, bare)
    assert missing.value.code is ErrorCode.NOT_FOUND
