"""A stand-in for an OpenAI-compatible model server: Starlette under uvicorn in a thread.

The request's ``model`` field picks the behaviour, so tests need no shared switches:
``ok`` answers ``StandIn.content``; ``timeout`` never answers in time; ``e400``/``e401``/
``e403``/``e404``/``e429``/``e500``/``e503`` answer that HTTP status with an OpenAI-style error
body; ``garbage`` answers 200 with a body that is not JSON; ``nochoices`` answers JSON that is
not a chat completion.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

SECRET_DETAIL = "internal shard 7f3a overloaded; org-12345"


class StandIn:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.content = "{}"
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        self._sock = sock
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, args=([sock],), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("stand-in model server did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def reset(self) -> None:
        self.requests.clear()
        self.headers.clear()
        self.content = "{}"

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        mode = str(body.get("model", ""))
        if mode == "timeout":
            await asyncio.sleep(3)  # longer than any client timeout in the tests
            return JSONResponse({})
        if mode.startswith("e") and mode[1:].isdigit():
            status = int(mode[1:])
            error = {"message": SECRET_DETAIL, "type": "server_error", "code": "upstream_busy"}
            headers = {"Retry-After": "7"} if status == 429 else None
            return JSONResponse({"error": error}, status_code=status, headers=headers)
        if mode == "garbage":
            return PlainTextResponse("<html>oops</html>", status_code=200)
        if mode == "nochoices":
            return JSONResponse({"object": "chat.completion", "choices": []})
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": mode,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
            }
        )


def intake_json(**fields: Any) -> str:
    base: dict[str, Any] = {
        "intent": "refund",
        "order_id": None,
        "reason": None,
        "evidence": None,
        "language": "en",
        "question": None,
    }
    base.update(fields)
    return json.dumps(base)
