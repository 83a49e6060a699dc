"""Count what an MCP server receives: an ASGI wrapper around a real tool server's app.

Served in this process with ``accord.protocol.in_process.InProcessServers`` (no socket), it
lets a test prove how many sessions (``tools/list``) and calls (``tools/call NAME``) reached
the server, whoever made them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class CountingApp:
    """``counts["tools/list"]``, ``counts["tools/call orders.lookup"]``, ... of every JSON-RPC
    request POSTed to the wrapped app (counted when it arrives, before the app answers)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.counts: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        body = b""
        while True:
            message = await receive()
            received.append(message)
            body += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        self._count(body)

        async def replay() -> Message:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)

    def _count(self, body: bytes) -> None:
        try:
            parsed = json.loads(body)
        except ValueError:
            return
        for request in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                continue
            method = request["method"]
            if method == "tools/call":
                method = f"tools/call {(request.get('params') or {}).get('name')}"
            self.counts[method] += 1
