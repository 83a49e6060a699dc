"""GET /.well-known/agent-card.json: the public card, with validators a cache can use.

a2a-sdk's own card route sends a weak ``ETag`` and ``Cache-Control`` but no ``Last-Modified``
and ignores ``If-Modified-Since``. The card of an Accord agent is fixed when the app is built
(it changes only with the contract, which takes a restart), so its bytes are encoded once and
served with both validators (conditional_get.py): a client holding the current card gets 304.
"""

from __future__ import annotations

import json

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.protocol.a2a.server.conditional_get import FixedDocument, serve_fixed


def encode_card(card: AgentCard) -> FixedDocument:
    """The card's wire JSON (what the SDK's route would send), encoded once."""
    body = json.dumps(agent_card_to_dict(card), ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )
    return FixedDocument(body=body)


def agent_card_route(card: AgentCard) -> Route:
    """GET (and HEAD) the card; public (the gate lets it by)."""
    document = encode_card(card)

    async def serve(request: Request) -> Response:
        return serve_fixed(request, document)

    return Route(AGENT_CARD_WELL_KNOWN_PATH, serve, methods=["GET"])
