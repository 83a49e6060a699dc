"""The skill schema document an agent serves next to its card, and the route that serves it.

The card's contract extension names this document by URL and SHA-256 (``skillSchemas``) rather
than carrying the schemas inline, for three reasons: an A2A extension's ``params`` is a protobuf
``Struct``, which turns every integer of a schema (``minimum``, ``maxLength``...) into a double;
the card is fetched by every client and crawler on every connect, while only clients that
validate need the schemas; and the schemas change only with the contract, so one strong ETag
(the digest the card names) lets every client cache them until the card says otherwise.

The document holds each skill's input and output JSON Schema exactly as the agent contract
states them (draft 2020-12), its ``access`` and ``envelope`` sections (contract 1.3), plus the
contract's error and status schemas, which every agent's status metadata follows. Its bytes are
fixed when the app is built: the digest in the card is the digest of what this route serves.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.contracts.agents import AgentContract
from accord.contracts.keys import SKILL_SCHEMAS_PATH
from accord.contracts.skill_schemas import skill_schema_document

CACHE_CONTROL: Final = "public, max-age=60"
"""As the card's: a client that re-reads the card sees a new digest as soon as it changes."""


@dataclass(frozen=True)
class SchemaDocument:
    """The document as served: its bytes and their SHA-256 (hex), which is also the ETag."""

    body: bytes
    sha256: str

    @property
    def etag(self) -> str:
        return f'"{self.sha256}"'


def encode_schema_document(contract: AgentContract) -> SchemaDocument:
    """Canonical bytes (sorted keys, no spaces), so the same contract always has one digest."""
    body = json.dumps(
        skill_schema_document(contract), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    return SchemaDocument(body=body, sha256=hashlib.sha256(body).hexdigest())


def _not_modified(request: Request, etag: str) -> bool:
    """RFC 9110 If-None-Match: weak comparison, a list of tags or ``*``."""
    header = request.headers.get("if-none-match")
    if header is None:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


def skill_schemas_route(document: SchemaDocument) -> Route:
    """GET (and HEAD) :data:`SKILL_SCHEMAS_PATH`; public, like the card (the gate lets it by)."""
    headers = {"ETag": document.etag, "Cache-Control": CACHE_CONTROL}

    async def serve(request: Request) -> Response:
        if _not_modified(request, document.etag):
            return Response(status_code=304, headers=headers)
        return Response(document.body, media_type="application/json", headers=headers)

    return Route(SKILL_SCHEMAS_PATH, serve, methods=["GET"])
