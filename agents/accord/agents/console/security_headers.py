"""The headers every console response carries: a strict Content-Security-Policy and friends.

The policy allows scripts, styles and images from the console's own origin only (no inline
script or style, no ``eval``), network calls to the console and to the orchestrator only, no
frames around the page, no plugins, and forms that go nowhere else. A page that cannot load
or run anything it did not ship has little an injected string can do.
"""

from __future__ import annotations

from typing import Final

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_CACHE: Final = "no-store"  # pages render per language; they hold no secret, but no cache


def content_security_policy(api_origin: str) -> str:
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self'",
            f"connect-src 'self' {api_origin}",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
            "object-src 'none'",
        ]
    )


class SecurityHeaders:
    """ASGI middleware: set the policy headers on every HTTP response."""

    def __init__(self, app: ASGIApp, *, api_origin: str) -> None:
        self.app = app
        self.headers = {
            "Content-Security-Policy": content_security_policy(api_origin),
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY",
            "Cross-Origin-Opener-Policy": "same-origin",
            "Cross-Origin-Resource-Policy": "same-origin",
            "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)
