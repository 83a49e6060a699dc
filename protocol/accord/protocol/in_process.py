"""Tool servers served inside this process: the same MCP over HTTP, without a socket.

::

    servers = InProcessServers()
    stop = servers.serve("http://127.0.0.1:8710", app)   # the app's lifespan is yours to run
    async with ToolClient.from_config(in_process=servers) as tools: ...   # that URL: `app`
    stop()

A :class:`~accord.protocol.mcp.client.ToolClient` given an ``InProcessServers`` sends the
requests for a URL under one of its origins (scheme, host, port) to that ASGI app through
``httpx2.ASGITransport``: Streamable HTTP, JSON-RPC, the contract check at connect and the
error mapping all run as over the network; only the socket is gone. A client given none (every
served service's) reaches its servers over the network only: nothing in this process can
reroute it. Whoever builds the in-process apps hands the same object to every client that
should reach them (the in-process Runner: its own client, and through ``ServeOptions`` the
clients of the services it serves, accord.agents.runner.inprocess).

Here, not under ``accord.protocol.mcp``: ``ServeOptions`` (accord.protocol.settings) carries
one, and the settings import nothing from the MCP layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url`` (the default port spelled out)."""
    parsed = httpx2.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return f"{parsed.scheme}://{parsed.host}:{port}"


class InProcessServers:
    """ASGI apps by origin, for the tool clients given this object."""

    def __init__(self) -> None:
        self._apps: dict[str, Any] = {}

    def serve(self, origin: str, app: Any) -> Callable[[], None]:
        """Route requests for ``origin`` to ``app``; returns the function that stops it."""
        key = origin_of(origin)
        self._apps[key] = app

        def stop() -> None:
            if self._apps.get(key) is app:
                del self._apps[key]

        return stop

    def transport(self, url: str) -> httpx2.AsyncBaseTransport | None:
        """The in-process transport for ``url``, or None when nothing here serves it."""
        app = self._apps.get(origin_of(url))
        return httpx2.ASGITransport(app) if app is not None else None
