"""The CORS rule browsers get from an agent (accord.protocol.a2a.server.cors): exactly the origins
given, as a browser spells them, no credentials; a preflight needs no token."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from accord.protocol.a2a.server.cors import browser_cors

PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, a2a-version",
}


async def _ok(_: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


def _client(*origins: str) -> httpx.AsyncClient:
    app = Starlette(
        routes=[Route("/", _ok, methods=["GET", "POST"])], middleware=[browser_cors(origins)]
    )
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agent")


@pytest.mark.parametrize(
    ("configured", "sent"),
    [
        ("http://127.0.0.1:8720", "http://127.0.0.1:8720"),
        ("https://Console.Example.com:443/", "https://console.example.com"),
        ("http://console.example.com:80", "http://console.example.com"),
    ],
)
async def test_the_configured_origin_is_allowed_as_a_browser_sends_it(
    configured: str, sent: str
) -> None:
    async with _client(configured) as client:
        answer = await client.options("/", headers={"Origin": sent, **PREFLIGHT})
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == sent
    assert "access-control-allow-credentials" not in answer.headers


@pytest.mark.parametrize(
    "other",
    ["http://localhost:8720", "http://127.0.0.1:8721", "https://127.0.0.1:8720", "null"],
)
async def test_any_other_origin_gets_no_cors_answer(other: str) -> None:
    async with _client("http://127.0.0.1:8720") as client:
        preflight = await client.options("/", headers={"Origin": other, **PREFLIGHT})
        simple = await client.get("/", headers={"Origin": other})
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in simple.headers


async def test_only_the_api_methods_and_headers() -> None:
    origin = "http://127.0.0.1:8720"
    async with _client(origin) as client:
        put = await client.options(
            "/", headers={"Origin": origin, "Access-Control-Request-Method": "PUT"}
        )
        foreign_header = await client.options(
            "/",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-forwarded-user",
            },
        )
    assert put.status_code == 400
    assert foreign_header.status_code == 400
