"""A client's view of an agent's skill schemas: found from the card alone, checked by digest.

The card's contract extension names the schema document (``skillSchemas``: ``url`` and
``sha256``; card_schemas.py serves it). :func:`fetch_skill_schemas` reads it from the card's
own origin (or a trusted one, as for interfaces: origins.py), checks that its bytes are the ones
the card names, and hands back each skill's input and output JSON Schema.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from google.protobuf import json_format

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import CARD_SKILL_SCHEMAS_PARAM, CONTRACT_EXTENSION_URI
from accord.protocol.a2a.client.card import ResolvedCard, card_url, get_json
from accord.protocol.a2a.origins import check_origin


@dataclass(frozen=True)
class SchemasRef:
    """Where the card says the schemas are, and the SHA-256 (hex) of their bytes."""

    url: str
    sha256: str


@dataclass(frozen=True)
class PublishedSchemas:
    """The schema document an agent serves, as fetched and checked."""

    ref: SchemasRef
    document: dict[str, Any]

    @property
    def skills(self) -> list[str]:
        return list(self.document["skills"])

    def input(self, skill: str) -> dict[str, Any]:
        return dict(self._skill(skill)["input"])

    def output(self, skill: str) -> dict[str, Any]:
        return dict(self._skill(skill)["output"])

    def shared(self, name: str) -> dict[str, Any]:
        """A schema every skill's statuses follow: ``error`` or ``status``."""
        schemas = self.document.get("schemas")
        if not isinstance(schemas, Mapping) or not isinstance(schemas.get(name), Mapping):
            raise AccordError(
                ErrorCode.NOT_FOUND, f"the agent's schema document has no {name!r} schema"
            )
        return dict(schemas[name])

    def _skill(self, skill: str) -> Mapping[str, Any]:
        found = self.document["skills"].get(skill)
        if found is None:
            raise AccordError(
                ErrorCode.NOT_FOUND,
                f"the agent publishes no schemas for skill {skill!r}",
                {"skill": skill, "skills": self.skills},
            )
        return dict(found)


def schemas_ref(card: ResolvedCard) -> SchemasRef | None:
    """The card's ``skillSchemas`` (None: the agent publishes none, e.g. an older Accord)."""
    for extension in card.card.capabilities.extensions:
        if extension.uri != CONTRACT_EXTENSION_URI:
            continue
        value = json_format.MessageToDict(extension.params).get(CARD_SKILL_SCHEMAS_PARAM)
        if isinstance(value, Mapping):
            url, digest = value.get("url"), value.get("sha256")
            if isinstance(url, str) and url and isinstance(digest, str) and digest:
                return SchemasRef(url=url, sha256=digest.lower())
    return None


async def fetch_skill_schemas(http: httpx.AsyncClient, card: ResolvedCard) -> PublishedSchemas:
    """The agent's skill schemas. NOT_FOUND when the card names none; PERMISSION_DENIED when it
    names another origin; CONTRACT_VIOLATION when the bytes are not the ones the card names (the
    contract changed since the card was read: read the card again) or not a schema document."""
    ref = schemas_ref(card)
    if ref is None:
        raise AccordError(
            ErrorCode.NOT_FOUND,
            f"agent {card.name!r} names no skill schemas in its card "
            f"({CONTRACT_EXTENSION_URI} {CARD_SKILL_SCHEMAS_PARAM})",
        )
    check_origin(card_url(card.url), ref.url, agent=card.name)
    response, body = await get_json(http, ref.url)
    digest = hashlib.sha256(response.content).hexdigest()
    if digest != ref.sha256:
        raise AccordError(
            ErrorCode.CONTRACT_VIOLATION,
            f"the skill schemas at {ref.url} are not the ones the card of {card.name!r} names "
            "(sha256 differs): read the card again",
            {"url": ref.url, "expected": ref.sha256, "got": digest},
        )
    if not _is_document(body):
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, f"{ref.url} is not a skill schema document")
    return PublishedSchemas(ref=ref, document=dict(body))


def _is_document(body: Any) -> bool:
    skills = body.get("skills") if isinstance(body, Mapping) else None
    return isinstance(skills, Mapping) and all(
        isinstance(s, Mapping)
        and isinstance(s.get("input"), Mapping)
        and isinstance(s.get("output"), Mapping)
        for s in skills.values()
    )
