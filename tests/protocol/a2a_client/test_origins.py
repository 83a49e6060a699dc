"""The origin rule: which URLs share an origin, the refusal, and the opt-in setting."""

from __future__ import annotations

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.client import A2AClient
from accord.protocol.a2a.origins import ForeignOriginError, check_origin, origin_of
from accord.protocol.settings import SettingsError, current


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://Agent.Test", "http://agent.test:80/"),
        ("https://agent.test/a2a", "HTTPS://agent.test:443/other"),
        ("http://[::1]:8701", "http://[::1]:8701/x"),
    ],
)
def test_same_origin(a: str, b: str) -> None:
    assert origin_of(a) == origin_of(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://agent.test", "https://agent.test"),
        ("http://agent.test", "http://agent.test:8080"),
        ("http://127.0.0.1:8701", "http://localhost:8701"),
        ("http://agent.test", "http://agent.test.evil.example"),
    ],
)
def test_other_origin(a: str, b: str) -> None:
    assert origin_of(a) != origin_of(b)
    with pytest.raises(ForeignOriginError) as refused:
        check_origin(a, b)
    assert refused.value.code is ErrorCode.PERMISSION_DENIED
    assert str(origin_of(a)) in refused.value.message
    assert str(origin_of(b)) in refused.value.message


@pytest.mark.parametrize("url", ["ftp://agent.test", "agent.test", "http://"])
def test_not_an_http_url(url: str) -> None:
    with pytest.raises(AccordError) as refused:
        origin_of(url)
    assert refused.value.code is ErrorCode.INVALID_INPUT


def test_a_listed_origin_is_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_TRUSTED_ORIGINS", "https://cdn.example, http://10.0.0.7:8080")
    check_origin("http://agent.test", "https://cdn.example:443/rpc")
    check_origin("http://agent.test", "http://10.0.0.7:8080")
    with pytest.raises(ForeignOriginError):
        check_origin("http://agent.test", "http://10.0.0.7:8081")


@pytest.mark.parametrize("bad", ["cdn.example", "https://cdn.example/path", "https://a b"])
def test_a_malformed_trusted_origin_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("ACCORD_TRUSTED_ORIGINS", bad)
    with pytest.raises(SettingsError, match="ACCORD_TRUSTED_ORIGINS"):
        current()


async def test_the_client_refuses_before_sending_anything() -> None:
    card = {
        "name": "elsewhere",
        "description": "d",
        "version": "1",
        "supportedInterfaces": [
            {"url": "http://other.test", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
    }
    sent: list[httpx.Request] = []

    def route(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json=card)

    http = httpx.AsyncClient(transport=httpx.MockTransport(route))
    with pytest.raises(ForeignOriginError):
        await A2AClient.connect("http://agent.test", token="t", http=http)
    assert [r.url.host for r in sent] == ["agent.test"]
    assert all("authorization" not in r.headers for r in sent)
