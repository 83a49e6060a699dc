"""Resolving an Agent Card and choosing how to talk to the agent it describes.

The card is read with a2a-sdk's parser (it also upgrades 0.3-era cards), so any A2A agent's card
works. The client speaks A2A 1.0 over JSON-RPC and HTTP+JSON; an interface is usable when its
binding is one of those and its protocol version is 1.x (or unstated).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Final

import httpx
from a2a.client.card_resolver import parse_agent_card
from a2a.types.a2a_pb2 import AgentCard, AgentInterface
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from google.protobuf import json_format

from accord.contracts.card_params import card_param
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    API_KEY_HEADER,
    CARD_CONTRACT_VERSION_PARAM,
    CARD_CONTRACT_VERSIONS_PARAM,
    CONTRACT_EXTENSION_URI,
    DELEGATION_EXTENSION_URI,
    IDEMPOTENT_SEND_EXTENSION_URI,
)
from accord.protocol.a2a.client.wire import HTTP_JSON, JSONRPC, error_from_response

BINDINGS: Final = {"jsonrpc": JSONRPC, "rest": HTTP_JSON}
"""CLI/transport names to A2A protocol bindings."""


@dataclass(frozen=True)
class ResolvedCard:
    """A card as fetched (``raw``: the JSON the agent served) and as parsed."""

    url: str
    raw: dict[str, Any]
    card: AgentCard

    @property
    def name(self) -> str:
        return self.card.name

    @property
    def extensions(self) -> list[str]:
        return [e.uri for e in self.card.capabilities.extensions]

    @property
    def accord_contract(self) -> bool:
        return CONTRACT_EXTENSION_URI in self.extensions

    @property
    def accord_delegation(self) -> bool:
        return DELEGATION_EXTENSION_URI in self.extensions

    @property
    def idempotent_send(self) -> bool:
        """The agent keys a send by (principal, messageId): resending it is safe."""
        return IDEMPOTENT_SEND_EXTENSION_URI in self.extensions

    @property
    def contract_versions(self) -> list[str]:
        """The agent contract versions the card says the agent serves: the list of an Accord
        card, else the one version older Accord cards name, else the card's own version."""
        for extension in self.card.capabilities.extensions:
            if extension.uri != CONTRACT_EXTENSION_URI:
                continue
            params = json_format.MessageToDict(extension.params)
            listed = card_param(params, CARD_CONTRACT_VERSIONS_PARAM)
            if isinstance(listed, list) and all(isinstance(v, str) for v in listed):
                return [str(v) for v in listed]
            # compat.CARD_ONE_CONTRACT_VERSION
            one = card_param(params, CARD_CONTRACT_VERSION_PARAM)
            if isinstance(one, str):
                return [one]
        return [self.card.version] if self.card.version else []

    @property
    def streaming(self) -> bool:
        return bool(self.card.capabilities.streaming)

    def api_key_header(self) -> str:
        """The header an API key goes in, as the card's apiKey security scheme says."""
        for scheme in self.card.security_schemes.values():
            if scheme.HasField("api_key_security_scheme"):
                api = scheme.api_key_security_scheme
                if api.location.lower() == "header" and api.name:
                    return str(api.name)
        return API_KEY_HEADER

    def interfaces(self) -> list[AgentInterface]:
        return [i for i in self.card.supported_interfaces if _usable(i)]

    def pick(self, transport: str | None = None) -> AgentInterface:
        """The interface to use: the caller's binding if given, else the agent's first usable."""
        wanted = BINDINGS.get(transport.lower(), transport) if transport else None
        for interface in self.interfaces():
            if wanted is None or interface.protocol_binding == wanted:
                return interface
        offered = ", ".join(
            f"{i.protocol_binding} {i.protocol_version or '?'}"
            for i in self.card.supported_interfaces
        )
        raise AccordError(
            ErrorCode.VERSION_UNSUPPORTED,
            f"agent {self.name!r} offers no A2A 1.0 {wanted or 'JSONRPC or HTTP+JSON'} "
            f"interface (it offers: {offered or 'none'})",
        )


def _usable(interface: AgentInterface) -> bool:
    if interface.protocol_binding not in (JSONRPC, HTTP_JSON):
        return False
    version = interface.protocol_version.strip()
    return not version or version.split(".")[0] == "1"


def card_url(url: str) -> str:
    """The card's URL: ``url`` itself when it names a JSON file, else the well-known path."""
    if url.endswith(".json"):
        return url
    return url.rstrip("/") + AGENT_CARD_WELL_KNOWN_PATH


async def get_json(http: httpx.AsyncClient, target: str) -> tuple[httpx.Response, Any]:
    """GET ``target`` (JSON): transport failures and error statuses are contract errors
    (UNAVAILABLE, RETRYABLE_TIMEOUT, NOT_FOUND...); the body is None when it is not JSON."""
    try:
        response = await http.get(target, headers={"Accept": "application/json"})
    except (httpx.ConnectError, httpx.ConnectTimeout):
        raise AccordError(
            ErrorCode.UNAVAILABLE, f"no agent answers at {target}", {"url": target}
        ) from None
    except httpx.TimeoutException:
        raise AccordError(
            ErrorCode.RETRYABLE_TIMEOUT, f"{target} did not answer in time", {"url": target}
        ) from None
    except httpx.HTTPError:
        raise AccordError(
            ErrorCode.UNAVAILABLE, f"fetching {target} failed", {"url": target}
        ) from None
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code >= 400:
        raise error_from_response(response.status_code, body)
    return response, body


async def resolve_card(http: httpx.AsyncClient, url: str) -> ResolvedCard:
    """Fetch and parse the card; failures are contract errors (UNAVAILABLE, NOT_FOUND...)."""
    target = card_url(url)
    _, body = await get_json(http, target)
    if not isinstance(body, dict):
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, f"{target} is not an Agent Card (JSON)")
    try:
        card = parse_agent_card(copy.deepcopy(body))  # the parser edits what it reads
    except (json_format.ParseError, TypeError, ValueError):
        raise AccordError(
            ErrorCode.CONTRACT_VIOLATION, f"{target} is not a valid A2A Agent Card"
        ) from None
    return ResolvedCard(url=url, raw=body, card=card)
