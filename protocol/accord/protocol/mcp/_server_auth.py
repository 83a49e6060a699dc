"""The credential gate of a tool server over HTTP (the MCP authorization spec, 2025-11-25).

Every request to the MCP endpoint needs a verified principal: a bearer JWT or an ``X-API-Key``,
checked by the same :class:`~accord.protocol.auth.verify.Authenticator` the A2A gate uses. A
request without one gets HTTP 401 with the contract's UNAUTHENTICATED body and::

    WWW-Authenticate: Bearer realm="accord",
        resource_metadata="<origin>/.well-known/oauth-protected-resource/mcp"

which names the OAuth 2.0 Protected Resource Metadata (RFC 9728) served, publicly, at that path
(and at the bare ``/.well-known/oauth-protected-resource``, for clients that try the root
first). ``/healthz`` and ``/readyz`` stay public. The SDK's own ``RequireAuthMiddleware`` is not
used because it knows bearer tokens only (no API keys) and answers an OAuth-shaped body; its
metadata model and URL rule (:func:`build_resource_metadata_url`) are.

The principal is handed on in the ASGI scope under :data:`PRINCIPAL_SCOPE_KEY`; the MCP SDK
passes the HTTP request to the tool handler (``ctx.request``), where
:meth:`~accord.protocol.mcp.server.ToolServer.call` reads it. stdio has no gate: the parent
process that started the server is trusted, as the spec says of stdio transports.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Final

from mcp.server.auth.routes import build_resource_metadata_url
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import API_KEY_HEADER, PROTECTED_RESOURCE_PATH
from accord.protocol.auth import Principal
from accord.protocol.auth.verify import Authenticator
from accord.protocol.settings import current

PRINCIPAL_SCOPE_KEY: Final = "accord.principal"
REALM: Final = 'Bearer realm="accord"'


def origin_of(scope: Scope) -> str:
    """``scheme://host[:port]`` the client used (its Host header; the bound address without)."""
    host = ""
    for name, value in scope.get("headers", ()):
        if name == b"host":
            host = value.decode("latin-1")
            break
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


def metadata_url(origin: str, endpoint_path: str) -> str:
    """Where the endpoint's protected-resource metadata is (RFC 9728 section 3.1)."""
    return str(build_resource_metadata_url(AnyHttpUrl(origin + endpoint_path)))


def principal_of(scope: Scope) -> Principal | None:
    found = scope.get(PRINCIPAL_SCOPE_KEY)
    return found if isinstance(found, Principal) else None


def metadata_routes(resource_name: str, endpoint_path: str, grants: Sequence[str]) -> list[Route]:
    """The public metadata document, at the endpoint's RFC 9728 path and at the bare path.

    Built per request from the origin the client used: a tool server does not know the name it
    is reached by (a service name, a proxy), and the document is public, so reflecting the Host
    header discloses nothing; the MCP endpoint itself still checks Host (DNS rebinding).
    """

    async def metadata(request: Request) -> JSONResponse:
        origin = origin_of(request.scope)
        issuers = current().authorization_servers or (origin,)
        document = ProtectedResourceMetadata(
            resource=AnyHttpUrl(origin + endpoint_path),
            authorization_servers=[AnyHttpUrl(u) for u in issuers],
            scopes_supported=list(grants) or None,
            resource_name=resource_name,
            bearer_methods_supported=["header"],
        )
        return JSONResponse(document.model_dump(mode="json", exclude_none=True))

    endpoint_doc = PROTECTED_RESOURCE_PATH + endpoint_path
    return [
        Route(endpoint_doc, metadata, methods=["GET"]),
        Route(PROTECTED_RESOURCE_PATH, metadata, methods=["GET"]),
    ]


class ToolAuthGate:
    """Pure ASGI: public paths pass, everything else needs a verified principal (or 401)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator,
        public_paths: Iterable[str],
        endpoint_path: str,
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.public_paths = frozenset(public_paths)
        self.endpoint_path = endpoint_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.public_paths:
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        try:
            principal = self.authenticator.authenticate(headers)
        except AccordError as error:
            presented = bool(headers.get("authorization") or headers.get(API_KEY_HEADER.lower()))
            await self._challenge(scope, send, error, presented)
            return
        scope[PRINCIPAL_SCOPE_KEY] = principal
        await self.app(scope, receive, send)

    async def _challenge(
        self, scope: Scope, send: Send, error: AccordError, presented: bool
    ) -> None:
        where = metadata_url(origin_of(scope), self.endpoint_path)
        challenge = f'{REALM}, resource_metadata="{where}"'
        if presented:  # RFC 6750: a credential was sent and is not good
            description = error.message.replace('"', "'")
            challenge += f', error="invalid_token", error_description="{description}"'
        status, body = AccordError(ErrorCode.UNAUTHENTICATED, error.message).to_http()
        payload = json.dumps(body, ensure_ascii=False).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"www-authenticate", challenge.encode("latin-1", "replace")),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
