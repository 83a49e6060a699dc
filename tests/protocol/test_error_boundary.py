"""The outermost layer: an exception that escaped every other layer is answered with a contract
INTERNAL body (never Python's text) and logged, so uvicorn never closes the connection."""

from __future__ import annotations

import logging

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.error_boundary import ErrorBoundary


async def _raising(scope: Scope, receive: Receive, send: Send) -> None:
    raise RuntimeError("secret detail from a bug")


async def test_an_unhandled_error_becomes_a_contract_internal_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    transport = httpx.ASGITransport(app=ErrorBoundary(_raising), raise_app_exceptions=True)
    with caplog.at_level(logging.ERROR, "accord.protocol.error_boundary"):
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            r = await http.post("/", content=b"{}")
    assert r.status_code == 500
    assert AccordError.from_http(r.status_code, r.json()).code is ErrorCode.INTERNAL
    assert "secret detail" not in r.text
    assert "secret detail from a bug" in caplog.text  # the traceback is ours to read


async def test_a_started_response_is_ended_not_answered_twice() -> None:
    async def half(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"part", "more_body": True})
        raise RuntimeError("mid-stream")

    transport = httpx.ASGITransport(app=ErrorBoundary(half), raise_app_exceptions=True)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        r = await http.get("/")
    assert r.status_code == 200
    assert r.content == b"part"
