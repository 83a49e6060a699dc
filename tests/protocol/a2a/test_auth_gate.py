"""The gate: public card, credentials (JWT, API keys, revocation), version, body limits and
malformed requests, over both transports of a real agent process."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import jwt
import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import (
    CONTRACT_EXTENSION_URI,
    DELEGATION_EXTENSION_URI,
    IDEMPOTENT_SEND_EXTENSION_URI,
)
from accord.protocol.auth import mint_token
from tests.protocol.a2a.helpers import contract_state
from tests.protocol.a2a.wire_client import VERSION, AgentClient, auth, message
from tests.support.processes import Service

COMPLETE = {"mode": "complete", "n": 3}


def test_card_is_public_and_declares_extensions_and_security(agent: Service) -> None:
    r = httpx.get(agent.url + "/.well-known/agent-card.json")
    assert r.status_code == 200
    card = r.json()
    assert card["name"] == "test-agent"
    assert card["version"] == "1.2.3"
    assert card["skills"][0]["id"] == "echo"
    assert card["skills"][0]["tags"] == ["test"]
    uris = {e["uri"]: e for e in card["capabilities"]["extensions"]}
    assert set(uris) == {
        CONTRACT_EXTENSION_URI,
        DELEGATION_EXTENSION_URI,
        IDEMPOTENT_SEND_EXTENSION_URI,
    }
    assert uris[CONTRACT_EXTENSION_URI]["params"]["agentContractVersion"] == "1.2.3"
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["bearerFormat"] == "JWT"
    assert card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"]["name"] == "X-API-Key"
    assert {tuple(req["schemes"]) for req in card["securityRequirements"]} == {
        ("bearer",),
        ("apiKey",),
    }
    bindings = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    assert bindings == {"JSONRPC": agent.url, "HTTP+JSON": agent.url}


@pytest.fixture
def bad_tokens(token_for: Callable[..., str], shared_dirs: tuple[Path, Path]) -> dict[str, str]:
    data, _ = shared_dirs
    revoked_token = token_for("C-77")
    jti = jwt.decode(revoked_token, options={"verify_signature": False})["jti"]
    with (data / "revoked").open("a") as handle:
        handle.write(jti + "\n")
    return {
        "forged": mint_token("C-01", ["customer"], secret="another-secret-" + "x" * 40),
        "expired": token_for("C-01", ttl_s=-60),
        "revoked": revoked_token,
        "garbage": "not.a.jwt",
    }


@pytest.mark.parametrize(
    "kind", ["missing", "forged", "expired", "revoked", "garbage", "bad-api-key"]
)
def test_bad_credentials_get_401_with_challenge(
    client: AgentClient, bad_tokens: dict[str, str], kind: str
) -> None:
    if kind == "missing":
        headers = dict(VERSION)
    elif kind == "bad-api-key":
        headers = {"X-API-Key": "k-nope", **VERSION}
    else:
        headers = auth(bad_tokens[kind])
    answer = client.send(headers, message(COMPLETE))
    assert answer.status == 401
    assert answer.error is not None
    assert answer.error.code is ErrorCode.UNAUTHENTICATED
    r = httpx.post(client.url + "/message:send", headers=headers, json={})
    assert r.headers["www-authenticate"].startswith('Bearer realm="accord"')
    get = client.get(headers, str(uuid.uuid4()))
    assert get.status == 401
    assert get.error is not None


def test_revocation_applies_on_the_next_request(
    client: AgentClient, token_for: Callable[..., str], shared_dirs: tuple[Path, Path]
) -> None:
    data, _ = shared_dirs
    token = token_for("C-78")
    assert client.list(auth(token)).error is None
    jti = jwt.decode(token, options={"verify_signature": False})["jti"]
    with (data / "revoked").open("a") as handle:
        handle.write(f"{jti}  # lost laptop\n")
    answer = client.list(auth(token))
    assert answer.status == 401
    assert answer.error is not None
    assert "revoked" in answer.error.message


def test_api_keys_authenticate_and_own_their_tasks(client: AgentClient) -> None:
    customer = {"X-API-Key": "k-test-customer", **VERSION}
    answer = client.send(customer, message(COMPLETE))
    assert answer.state == "TASK_STATE_COMPLETED"
    assert answer.task["artifacts"][0]["parts"][0]["data"]["user"] == "C-09"
    assert client.get(customer, answer.task["id"]).error is None
    service = {"X-API-Key": "k-test-service", **VERSION}
    assert client.get(service, answer.task["id"]).error.code is ErrorCode.NOT_FOUND  # type: ignore[union-attr]


@pytest.mark.parametrize("version", [None, "0.3", "1.1", "2.0", "banana"])
def test_missing_or_unsupported_version_is_a_clear_error(
    client: AgentClient, token_for: Callable[..., str], version: str | None
) -> None:
    headers = {"Authorization": f"Bearer {token_for('C-01')}"}
    if version is not None:
        headers["A2A-Version"] = version
    answer = client.send(headers, message(COMPLETE))
    assert answer.error is not None
    assert answer.error.code is ErrorCode.VERSION_UNSUPPORTED
    assert "A2A-Version" in answer.error.message
    assert "1.0" in answer.error.message
    if client.transport == "jsonrpc":
        assert answer.body["error"]["code"] == -32009
    else:
        assert answer.status == 400


def test_oversized_bodies_get_413(client: AgentClient, token_for: Callable[..., str]) -> None:
    big = message({"mode": "complete"}, text="x" * (1024 * 1024 + 10))
    path = "/" if client.transport == "jsonrpc" else "/message:send"
    payload = (
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": big}}
        if client.transport == "jsonrpc"
        else {"message": big}
    )
    raw = json.dumps(payload).encode()
    headers = {**auth(token_for("C-01")), "content-type": "application/json"}
    declared = client.http.post(path, content=raw, headers=headers)
    assert declared.status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: the body is streamed
        for i in range(0, len(raw), 65536):
            yield raw[i : i + 65536]

    streamed = client.http.post(path, content=chunks(), headers=headers)
    assert streamed.status_code == 413
    for r in (declared, streamed):
        body = r.json()
        error = body["error"]
        if client.transport == "jsonrpc":
            assert error["data"][0]["reason"] == ErrorCode.PAYLOAD_TOO_LARGE.value
        else:
            assert error["details"][0]["reason"] == ErrorCode.PAYLOAD_TOO_LARGE.value


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (
            json.dumps({"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {}}).encode(),
            -32600,
        ),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod"}).encode(), -32601),
        (
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {"message": {"parts": "nope"}},
                }
            ).encode(),
            -32602,
        ),
        (json.dumps([1, 2]).encode(), -32600),
    ],
)
def test_malformed_jsonrpc_gets_protocol_errors(
    agent: Service, token_for: Callable[..., str], body: bytes, code: int
) -> None:
    r = httpx.post(agent.url + "/", content=body, headers=auth(token_for("C-01")))
    assert r.status_code == 200, r.text
    assert r.json()["error"]["code"] == code


@pytest.mark.parametrize(
    "body", [b"{not json", b'{"message": {"parts": "nope"}}', b"[]", b'{"message": 5}']
)
def test_malformed_rest_bodies_get_400(
    agent: Service, token_for: Callable[..., str], body: bytes
) -> None:
    r = httpx.post(
        agent.url + "/message:send",
        content=body,
        headers={**auth(token_for("C-01")), "content-type": "application/json"},
    )
    assert r.status_code == 400, r.text
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_health_endpoints_are_public(agent: Service) -> None:
    assert httpx.get(agent.url + "/healthz").json()["status"] == "ok"
    assert httpx.get(agent.url + "/readyz").status_code == 200


def test_completed_task_over_both_transports(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    answer = client.send(auth(token_for("C-01")), message(COMPLETE))
    state, error = contract_state(answer.task)
    assert state.status.value == "completed"
    assert error is None
    assert answer.task["artifacts"][0]["parts"][0]["data"] == {"echo": 3, "user": "C-01"}
