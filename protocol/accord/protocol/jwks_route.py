"""``GET /.well-known/jwks.json``: a service's public signing keys, for its tokens' verifiers.

Public like the card and health: a public key lets nobody mint a token. Read from the service's
key ring on each request (cached until the ring's file changes), so a rotation or a revocation
is served at once; ``Cache-Control`` keeps verifiers' own caches shorter than their refresh.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from accord.contracts.keys import SERVICE_JWKS_PATH
from accord.protocol.service_keys import published_jwks

CACHE_CONTROL = "public, max-age=30"


def jwks_route(service_name: str) -> Route:
    async def jwks(_: Request) -> JSONResponse:
        body = await asyncio.to_thread(published_jwks, service_name)
        return JSONResponse(body, headers={"Cache-Control": CACHE_CONTROL})

    return Route(SERVICE_JWKS_PATH, jwks, methods=["GET"])
