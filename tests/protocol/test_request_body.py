"""One read and one JSON parse per request body: request_body.py on its own, and a whole agent
app (telemetry middleware, gate, a2a-sdk route) counting the parses of one request's body."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a.server.tasks import InMemoryTaskStore
from starlette.types import ASGIApp, Message, Receive, Scope

from accord.protocol.a2a.server import build_agent_app
from accord.protocol.auth import mint_token
from accord.protocol.auth.verify import Authenticator
from accord.protocol.request_body import (
    BODY_SCOPE_KEY,
    KeptBodyRequest,
    RequestBody,
    kept_body,
    read_body,
)
from accord.protocol.settings import ServeOptions
from accord.protocol.telemetry.asgi import PEEK_LIMIT, ServerTelemetry
from tests.protocol.a2a import agent_app

SECRET = "request-body-test-secret-" + "x" * 32


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every json.loads of the process (ours, Starlette's, protobuf's), by its input."""
    seen: list[bytes] = []
    real = json.loads

    def counting(text: str | bytes | bytearray, *args: Any, **kwargs: Any) -> Any:
        seen.append(text.encode() if isinstance(text, str) else bytes(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    return seen


def receiving(*chunks: bytes, disconnect: bool = False) -> tuple[Receive, list[int]]:
    messages: list[Message] = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    if disconnect:
        messages[-1]["more_body"] = True
        messages.append({"type": "http.disconnect"})
    calls = [0]

    async def receive() -> Message:
        calls[0] += 1
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    return receive, calls


async def drain(receive: Receive) -> bytes:
    body: bytes = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if message["type"] != "http.request" or not message.get("more_body", False):
            return body


def test_the_json_is_parsed_once_on_first_use(parses: list[bytes]) -> None:
    body = RequestBody(b'{"method": "SendMessage"}')
    assert parses == []
    assert body.json == {"method": "SendMessage"}
    assert body.is_json
    assert body.json is body.json
    assert len(parses) == 1


@pytest.mark.parametrize("raw", [b"", b"not json", b"\xff\xfe"])
def test_a_body_that_is_not_json_reads_as_none(raw: bytes) -> None:
    body = RequestBody(raw)
    assert body.json is None
    assert not body.is_json


async def test_the_first_reader_keeps_the_body_and_the_next_reuses_it() -> None:
    receive, calls = receiving(b'{"a":', b" 1}")
    scope: Scope = {"type": "http"}
    body, replay = await read_body(scope, receive, limit=100)
    assert body is not None
    assert body.json == {"a": 1}
    assert kept_body(scope) is body
    again, same = await read_body(scope, replay, limit=100)
    assert again is body
    assert same is replay  # nothing read: the app still gets the whole body from the replay
    assert await drain(replay) == b'{"a": 1}'
    assert calls[0] == 2


async def test_a_body_over_the_limit_is_not_kept_and_is_replayed_for_the_next_reader() -> None:
    receive, _ = receiving(b"x" * 6, b"y" * 6, b"z" * 6)
    scope: Scope = {"type": "http"}
    body, replay = await read_body(scope, receive, limit=10)
    assert body is None
    assert BODY_SCOPE_KEY not in scope
    larger, replay = await read_body(scope, replay, limit=100)
    assert larger is not None
    assert larger.raw == b"x" * 6 + b"y" * 6 + b"z" * 6
    # a kept body is still refused by a reader with a lower limit
    assert (await read_body(scope, replay, limit=10))[0] is None


async def test_a_disconnect_ends_the_body() -> None:
    receive, _ = receiving(b'{"a": 1}', disconnect=True)
    body, _ = await read_body({"type": "http"}, receive, limit=100)
    assert body is not None
    assert body.json == {"a": 1}


async def test_a_kept_body_request_answers_from_the_scope(parses: list[bytes]) -> None:
    scope: Scope = {"type": "http", "method": "POST", "headers": []}
    body, _ = await read_body(scope, receiving(b'{"k": [1]}')[0], limit=100)
    assert body is not None
    request = KeptBodyRequest(scope)  # nothing to receive: it must not read again
    assert await request.body() == b'{"k": [1]}'
    assert await request.json() is body.json
    assert len(parses) == 1
    broken: Scope = {"type": "http", "method": "POST", "headers": []}
    await read_body(broken, receiving(b"{not json")[0], limit=100)
    with pytest.raises(ValueError, match="Expecting property name"):
        await KeptBodyRequest(broken).json()  # the SDK turns this into its parse error


# -- the whole app ----------------------------------------------------------------------------


def build(max_body_bytes: int = 1024 * 1024) -> ASGIApp:
    return build_agent_app(
        agent_app.CONTRACT,
        agent_app.TestExecutor(agent_app.CONTRACT),
        ServeOptions(port=8799),
        service_name="test",
        task_store=InMemoryTaskStore(),
        authenticator=Authenticator(secret=SECRET),
        max_body_bytes=max_body_bytes,
    )


@pytest.fixture
def app() -> ASGIApp:
    return build()


@pytest.fixture
def headers() -> dict[str, str]:
    token = mint_token("C-01", ["customer"], secret=SECRET)
    return {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}


def send_message(pad: str = "") -> dict[str, Any]:
    data: dict[str, Any] = {"mode": "complete", "n": 7}
    # The padding makes the body big without making the message's content big (that is
    # bounded by ACCORD_MAX_MESSAGE_BYTES, 64 KiB, the same as the telemetry's peek).
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": data}],
        **({"metadata": {"pad": pad}} if pad else {}),
    }


def client_for(app: ASGIApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agent")


@pytest.mark.parametrize("telemetry", [True, False])
@pytest.mark.parametrize("pad", [0, PEEK_LIMIT + 1])  # too big for telemetry: the gate reads it
async def test_a_json_rpc_body_is_parsed_once(
    app: ASGIApp,
    headers: dict[str, str],
    parses: list[bytes],
    telemetry: bool,
    pad: int,
) -> None:
    wrapped = ServerTelemetry(app, protocol="a2a") if telemetry else app
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": send_message("p" * pad)},
        }
    ).encode()
    async with client_for(wrapped) as client:
        r = await client.post("/", content=body, headers=headers)
    assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert parses.count(body) == 1


async def test_a_rest_body_is_parsed_once_by_us_and_once_into_protobuf_by_the_sdk(
    app: ASGIApp,
    headers: dict[str, str],
    parses: list[bytes],
) -> None:
    body = json.dumps({"message": send_message()}).encode()
    async with client_for(ServerTelemetry(app, protocol="a2a")) as client:
        r = await client.post("/message:send", content=body, headers=headers)
    assert r.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # a2a-sdk's REST route reads the bytes (the kept ones) and parses them straight into
    # protobuf (json_format.Parse); telemetry and the gate share one parse.
    assert parses.count(body) == 2


async def test_a_body_kept_by_telemetry_still_meets_the_gates_limit(
    headers: dict[str, str],
) -> None:
    small = ServerTelemetry(build(max_body_bytes=1024), protocol="a2a")
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": {"message": send_message()}}
    ).encode()
    async with client_for(small) as client:
        fits = await client.post("/", content=body, headers=headers)
        padded = json.dumps({"message": send_message("p" * 2048)}).encode()

        async def streamed() -> AsyncIterator[bytes]:  # no Content-Length to refuse it early
            yield padded

        too_big = await client.post("/message:send", content=streamed(), headers=headers)
    assert fits.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert too_big.status_code == 413
    assert too_big.json()["error"]["details"][0]["reason"] == "PAYLOAD_TOO_LARGE"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b'{"x": NaN}', "NaN is not a JSON number"),
        (b'{"x": -Infinity}', "-Infinity is not a JSON number"),
        (b'{"x": 1e309}', "out of range"),
        (b"[" * 2000 + b"]" * 2000, "nesting deeper than"),
        (b"[" * 33 + b"]" * 33, "nesting deeper than"),
        (b"\xff\xfe\xfd", "not UTF-8"),
        (b'{"x": ', "not JSON"),
    ],
)
def test_a_body_protobuf_could_not_hold_is_not_json_and_says_why(raw: bytes, problem: str) -> None:
    body = RequestBody(raw)
    assert body.json is None
    assert not body.is_json
    assert body.problem is not None
    assert problem in body.problem


def test_nesting_up_to_the_limit_and_large_finite_numbers_are_json() -> None:
    body = RequestBody(b"[" * 32 + b"1.5e308" + b"]" * 32)
    assert body.is_json
    assert body.problem is None
