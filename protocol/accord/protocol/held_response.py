"""Rewrite a whole response body on its way out: the one mechanism behind the filters that make
the SDKs' error answers typed and safe (a2a/server_errors.py, mcp/_server_requests.py).

``holding(send, hold, rewrite)`` wraps an ASGI ``send``: a response whose start ``hold``
accepts is held back until its body is complete, then ``rewrite(start, body)`` returns the
body to send and the content type (None: keep the response's own), and may return a
:class:`Rewritten` with a status too (the A2A REST errors whose status a2a-sdk spells otherwise
than A2A); ``Content-Length`` is set to the new body's. Anything else (event streams,
successes the filter does not care about) passes through untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from starlette.types import Message, Send


class Rewritten(NamedTuple):
    body: bytes
    content_type: bytes | None = None  # None: the response's own
    status: int | None = None  # None: the response's own


Rewrite = Callable[[Message, bytes], tuple[bytes, bytes | None] | Rewritten]


def content_type(start: Message) -> bytes:
    for name, value in start.get("headers", []):
        if name == b"content-type":
            return bytes(value)
    return b""


def holding(send: Send, hold: Callable[[Message], bool], rewrite: Rewrite) -> Send:
    held: Message | None = None
    chunks: list[bytes] = []

    async def wrapped(message: Message) -> None:
        nonlocal held
        if message["type"] == "http.response.start":
            if hold(message):
                held = message
                return
            await send(message)
            return
        if held is None or message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body, kind, status = Rewritten(*rewrite(held, b"".join(chunks)))
        dropped = {b"content-length"} | ({b"content-type"} if kind is not None else set())
        headers = [(k, v) for k, v in held.get("headers", []) if k not in dropped]
        if kind is not None:
            headers.append((b"content-type", kind))
        headers.append((b"content-length", str(len(body)).encode()))
        start, held = {**held, "headers": headers}, None
        if status is not None:
            start["status"] = status
        await send(start)
        await send({"type": "http.response.body", "body": body})

    return wrapped
