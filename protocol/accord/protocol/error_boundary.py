"""The outermost layer of every service: an exception no layer answered becomes a contract
INTERNAL answer, and the connection stays usable.

uvicorn answers an exception that escapes the app with a bare ``500 Internal Server Error`` and
closes the connection, so the caller's next request on that keep-alive connection was reset.
Here the exception is logged (with its traceback, for us) and answered with a contract body
(never Python's text, for them); a response that had already started is ended as it is, and
so is one the app returned from without ending it.
"""

from __future__ import annotations

import json
import logging
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from accord.contracts.errors import AccordError, ErrorCode

logger = logging.getLogger("accord.protocol.error_boundary")

_STATUS, _PAYLOAD = AccordError(ErrorCode.INTERNAL).to_http()
_BODY: Final = json.dumps(_PAYLOAD).encode()


class ErrorBoundary:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        ended = False

        async def tracking(message: Message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                ended = True
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception:
            logger.exception("unhandled error serving %s %s", scope.get("method"), scope["path"])
            if not started:
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(_BODY)).encode()),
                ]
                await send({"type": "http.response.start", "status": _STATUS, "headers": headers})
                await send({"type": "http.response.body", "body": _BODY})
            elif not ended:
                await send({"type": "http.response.body", "body": b""})
            return
        if started and not ended:
            # sse-starlette stops an event stream at a graceful shutdown by returning without
            # its last body message (uvicorn logs that as an ERROR): the stream ends here.
            await send({"type": "http.response.body", "body": b""})
