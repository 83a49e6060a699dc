"""Extra JSON routes of an agent, for a verified principal (the gate has authenticated).

An agent adds a read-only endpoint (``GET /approvals``, ``GET /stats``) by giving a path and a
function of the caller's :class:`~accord.protocol.auth.Principal`; the route does the rest once:
no credential -> UNAUTHENTICATED, a contract error -> its HTTP form, a dict -> a JSON body.
Agent code never touches Starlette.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.server.gate import PrincipalUser
from accord.protocol.auth import Principal

PrincipalHandler = Callable[[Principal], Awaitable[dict[str, Any]]]


def principal_route(path: str, handler: PrincipalHandler) -> BaseRoute:
    """``GET path`` answering ``handler(principal)`` as JSON."""

    async def endpoint(request: Request) -> JSONResponse:
        user = request.scope.get("user")
        try:
            if not isinstance(user, PrincipalUser):
                raise AccordError(ErrorCode.UNAUTHENTICATED)
            return JSONResponse(await handler(user.principal))
        except AccordError as error:
            status, body = error.to_http()
            return JSONResponse(body, status_code=status)

    return Route(path, endpoint, methods=["GET"])
