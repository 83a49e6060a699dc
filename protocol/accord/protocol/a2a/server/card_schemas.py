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

import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.contracts.agents import AgentContract
from accord.contracts.keys import SKILL_SCHEMAS_PATH
from accord.contracts.skill_schemas import skill_schema_document
from accord.protocol.a2a.server.conditional_get import FixedDocument, serve_fixed

SchemaDocument = FixedDocument
"""The document as served: its bytes and their SHA-256 (hex), which is also the ETag."""


def encode_schema_document(contract: AgentContract) -> SchemaDocument:
    """Canonical bytes (sorted keys, no spaces), so the same contract always has one digest."""
    body = json.dumps(
        skill_schema_document(contract), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    return SchemaDocument(body=body)


def skill_schemas_route(document: SchemaDocument) -> Route:
    """GET (and HEAD) :data:`SKILL_SCHEMAS_PATH`; public, like the card (the gate lets it by),
    cached like it (conditional_get.py)."""

    async def serve(request: Request) -> Response:
        return serve_fixed(request, document)

    return Route(SKILL_SCHEMAS_PATH, serve, methods=["GET"])
