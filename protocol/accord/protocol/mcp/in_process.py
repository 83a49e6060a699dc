"""Tool servers served inside this process: the same MCP over HTTP, without a socket.

::

    stop = serve_in_process("http://127.0.0.1:8710", app)   # the app's lifespan is yours to run
    async with ToolClient.from_config() as tools: ...       # commerce's URL now reaches `app`
    stop()

While an origin (scheme, host, port) is registered, every :class:`ToolClient` of this process
that connects to a URL under it sends its requests to the ASGI app through
``httpx2.ASGITransport``: Streamable HTTP, JSON-RPC, the contract check at connect and the
error mapping all run as over the network; only the socket is gone. Used by the in-process
Runner (tests, embedding) so that no port is opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2

_APPS: dict[str, Any] = {}


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url`` (the default port spelled out)."""
    parsed = httpx2.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return f"{parsed.scheme}://{parsed.host}:{port}"


def serve_in_process(origin: str, app: Any) -> Callable[[], None]:
    """Route tool-client requests for ``origin`` to ``app``; returns the function that stops it."""
    key = origin_of(origin)
    _APPS[key] = app

    def stop() -> None:
        if _APPS.get(key) is app:
            del _APPS[key]

    return stop


def in_process_transport(url: str) -> httpx2.AsyncBaseTransport | None:
    """The in-process transport for ``url``, or None when nothing here serves it."""
    app = _APPS.get(origin_of(url))
    return httpx2.ASGITransport(app) if app is not None else None
