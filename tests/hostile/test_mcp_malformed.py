"""Malformed requests to a real tool server: typed contract answers (never pydantic's text),
no unauthenticated or idle GET stream, a per-caller rate, and the connection kept."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from tests.support.processes import Service, run_service
from tests.support.service_keys import write_trust
from tests.support.tool_auth import bearer, secret_env, service_token

pytestmark = pytest.mark.timeout(120)

CALLERS: Final = tuple(f"caller-{n:02d}" for n in range(16))
_callers = itertools.cycle(CALLERS)  # each signs at most a few requests: under its burst
MCP: Final = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def commerce(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    base: Path = tmp_path_factory.mktemp("mcp-hostile")
    # Callers of their own (the rate limit is low on purpose): services this server trusts.
    trusted = {name: {"grants": [], "tenants": ["*"]} for name in (*CALLERS, "hasty")}
    env = {
        **secret_env(),
        "ACCORD_SERVICE_TRUST": str(write_trust(base / "trust.yaml", trusted)),
        "ACCORD_DATA_DIR": str(base / "data"),
        "ACCORD_SERVICE_RATE_LIMIT_PER_S": "5",  # burst 10
    }
    with run_service("commerce", ["serve", "commerce"], env=env, log_dir=base) as service:
        yield service


def _post(http: httpx.Client, body: bytes, **headers: str) -> httpx.Response:
    # A caller of its own each time: the server's rate limit is low on purpose (last test).
    token = service_token(name=next(_callers))
    return http.post("/mcp", content=body, headers={**MCP, **bearer(token), **headers})


CASES: Final[dict[str, tuple[bytes, int]]] = {
    "method is a list": (b'{"jsonrpc":"2.0","id":1,"method":["tools/list"]}', -32600),
    "params is a string": (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}', -32600),
    "a batch": (b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', -32600),
    "no jsonrpc": (b'{"id":1,"method":"tools/list"}', -32600),
    "NaN": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":NaN}}}',
        -32700,
    ),
    "nested 1,000 deep": (b'{"a":' * 1000 + b"1" + b"}" * 1000, -32700),
    "not UTF-8": (b"\xff\xfe\xfd", -32700),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_malformed_message_is_a_typed_json_rpc_error(commerce: Service, case: str) -> None:
    body, code = CASES[case]
    with httpx.Client(base_url=commerce.url, timeout=30) as http:
        r = _post(http, body)
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["code"] == code
        assert AccordError.from_jsonrpc_error(error).code is ErrorCode.INVALID_INPUT
        # The same connection still serves a correct request.
        ok = _post(http, b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        assert ok.status_code == 200, ok.text
        assert "result" in ok.json()


def test_the_sdks_validation_text_never_reaches_the_caller(commerce: Service) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":[]}}'
    with httpx.Client(base_url=commerce.url, timeout=30) as http:
        r = _post(http, body)
    assert "pydantic" not in r.text
    assert "Input should be" not in r.text
    answer: dict[str, Any] = r.json()
    assert "error" in answer, answer


def test_transport_refusals_have_a_contract_body(commerce: Service) -> None:
    with httpx.Client(base_url=commerce.url, timeout=30) as http:
        wrong_type = _post(
            http,
            b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            **{"Content-Type": "text/plain"},
        )
        foreign = _post(
            http, b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', host="evil.example"
        )
    for refused in (wrong_type, foreign):
        assert refused.status_code in (400, 421)
        assert (
            AccordError.from_http(refused.status_code, refused.json()).code
            is ErrorCode.INVALID_INPUT
        )


def test_get_opens_no_stream(commerce: Service) -> None:
    with httpx.Client(base_url=commerce.url, timeout=10) as http:
        anonymous = http.get("/mcp", headers={"Accept": "text/event-stream"})
        assert anonymous.status_code == 401
        signed = http.get(
            "/mcp", headers={"Accept": "text/event-stream", **bearer(service_token())}
        )
        assert signed.status_code == 405
        assert "POST" in signed.headers["allow"]
        error = AccordError.from_http(405, signed.json())
        assert error.code is ErrorCode.UNSUPPORTED_OPERATION


def test_a_caller_over_its_rate_is_told_when_to_come_back(commerce: Service) -> None:
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    with httpx.Client(base_url=commerce.url, timeout=30) as http:
        token = service_token(name="hasty")
        answers = [
            http.post("/mcp", content=call, headers={**MCP, **bearer(token)}) for _ in range(30)
        ]
    refused = [r for r in answers if r.status_code == 429]
    assert refused, [r.status_code for r in answers]
    assert int(refused[0].headers["retry-after"]) >= 1
    assert AccordError.from_http(429, refused[0].json()).code is ErrorCode.RATE_LIMITED
