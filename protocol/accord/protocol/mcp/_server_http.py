"""HTTP edges of a tool server: the request body limit and the Host header allow-list."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from typing import Final

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from accord.contracts.errors import AccordError, ErrorCode

DEFAULT_MAX_BODY_BYTES: Final = 1024 * 1024
LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


def transport_security(host: str, allowed_hosts: Sequence[str] | None) -> TransportSecuritySettings:
    """DNS-rebinding protection: loopback patterns by default on a loopback bind.

    Bound to another interface (a container's 0.0.0.0) the check is off unless hosts are given,
    because the name clients use (a service name, a proxy) is not knowable here.
    """
    if allowed_hosts is None:
        if host not in LOOPBACK:
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        allowed_hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    hosts = list(allowed_hosts)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # A bare name also matches it with any port, as clients send "host:port".
    patterns = sorted({p for h in hosts for p in ((h,) if ":" in h else (h, f"{h}:*"))})
    origins = [f"{scheme}://{p}" for p in patterns for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=patterns, allowed_origins=origins
    )


def _too_large_body() -> bytes:
    _status, body = AccordError(
        ErrorCode.PAYLOAD_TOO_LARGE, "request body exceeds the server's limit"
    ).to_http()
    return json.dumps(body).encode()


class BodySizeLimit:
    """Answer 413 with a contract PAYLOAD_TOO_LARGE body before the app reads a large body.

    The MCP SDK has its own limit, but it answers plain text; this one runs first.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self._body = _too_large_body()

    async def _reject(self, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(self._body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": self._body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "DELETE"):
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                if value.isdigit() and int(value) > self.max_bytes:
                    await self._reject(send)
                    return
                break
        # Read the (bounded) body first so a lying or absent Content-Length cannot get past.
        chunks: list[bytes] = []
        size = 0
        pending: deque[Message] = deque()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                pending.append(message)
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._reject(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        pending.appendleft({"type": "http.request", "body": b"".join(chunks), "more_body": False})

        async def replay() -> Message:
            return pending.popleft() if pending else await receive()

        await self.app(scope, replay, send)
