"""Issue #12, "Logs": at DEBUG the raw Authorization header and X-API-Key were logged with the
request. Real services at DEBUG get requests with a token, an API key and a cookie; none of the
raw values may reach their log, in either log format, whoever logged it (ours, a2a, mcp, httpx,
uvicorn). The redaction rules are also checked one by one."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Final

import httpx
import pytest

from accord.protocol.auth import mint_token
from accord.protocol.telemetry.redaction import MASK, RedactingFilter, redact
from tests.security.tokens_support import VERSION, bearer, clean_env, list_tasks, serve

SECRET: Final = "logs-test-secret-" + "a1b2c3d4e5f6a7b8" * 3
API_KEY: Final = "k-raw-api-key-9d8c7b6a5f4e"
COOKIE: Final = "session=cookie-value-5e4d3c2b1a"


def keys_file(tmp_path: Path) -> Path:
    path = tmp_path / "keys.yaml"
    path.write_text(f"{API_KEY}:\n  subject: svc:batch\n  roles: [service]\n  id: batch\n")
    return path


def test_an_a2a_service_at_debug_logs_no_credential(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path / "data",
        ACCORD_JWT_SECRET=SECRET,
        ACCORD_LOG_LEVEL="DEBUG",
        ACCORD_API_KEYS=str(keys_file(tmp_path)),
    )
    token = mint_token("C-01", ["customer"], secret=SECRET)
    with serve("policy", env, tmp_path) as service:
        assert list_tasks(service.url, bearer(token) | {"Cookie": COOKIE}).status_code == 200
        assert list_tasks(service.url, {"X-API-Key": API_KEY}).status_code == 200
        assert list_tasks(service.url, bearer(token + "tampered")).status_code == 401
        send = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "m-logs-1",
                    "role": "ROLE_USER",
                    "parts": [{"text": "is O-1001 refundable?"}],
                }
            },
        }
        for headers in (bearer(token), {"X-API-Key": API_KEY}):
            r = httpx.post(service.url + "/", json=send | {"id": 2}, headers={**VERSION, **headers})
            assert r.status_code == 200
        log = service.log()
    assert "DEBUG" in log
    assert "a2a." in log
    assert MASK in log  # ... and it did carry the headers, redacted
    for raw in (token, token.split(".")[1], API_KEY, "cookie-value-5e4d3c2b1a", SECRET):
        assert raw not in log


def test_a_tool_server_at_debug_logs_no_credential_in_json_lines(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path / "data",
        ACCORD_JWT_SECRET=SECRET,
        ACCORD_LOG_LEVEL="DEBUG",
        ACCORD_LOG_FORMAT="json",
    )
    token = mint_token("svc:orchestrator", ["service"], secret=SECRET)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "logs-test", "version": "1"},
        },
    }
    with serve("commerce", env, tmp_path) as service:
        for headers in (bearer(token) | {"Cookie": COOKIE}, {"X-API-Key": API_KEY}):
            httpx.post(
                service.url + "/mcp",
                json=initialize,
                headers={"Accept": "application/json, text/event-stream", **headers},
            )
        log = service.log()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert any(line["level"] == "DEBUG" for line in lines)
    for raw in (token, API_KEY, "cookie-value-5e4d3c2b1a", SECRET):
        assert raw not in log


JWT: Final = mint_token("C-01", ["customer"], secret=SECRET)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"headers: {{'authorization': 'Bearer {JWT}', 'accept': '*/*'}}", "'accept': '*/*'"),
        (f"[(b'authorization', b'Bearer {JWT}'), (b'host', b'x')]", "(b'host', b'x')"),
        (f'{{"x-api-key": "{API_KEY}", "n": 1}}', '"n": 1'),
        (f"X-API-Key: {API_KEY}", "X-API-Key: "),
        (f"Cookie: {COOKIE}", "Cookie: "),
        (f"set-cookie={COOKIE}", "set-cookie="),
        (f"calling with Bearer {JWT} now", "calling with Bearer "),
        (f"token {JWT} seen", "token "),
        ("url postgresql://accord:hunter2-pw@db:5432/accord", "postgresql://accord:"),
        ("settings jwt_secret='s3cr3t-value-here' mode=dev", "mode=dev"),
        ('{"password": "pw-value-123", "user": "accord"}', '"user": "accord"'),
        ("api_key=sk-live-abcdef123456&x=1", "&x=1"),
    ],
)
def test_each_rule_redacts_the_value_and_keeps_the_rest(text: str, kept: str) -> None:
    out = redact(text)
    assert MASK in out
    assert kept in out
    for raw in (JWT, API_KEY, "cookie-value", "hunter2-pw", "s3cr3t", "pw-value", "sk-live"):
        assert raw not in out


def test_plain_messages_are_left_alone() -> None:
    for text in (
        "Authorization header must be 'Bearer <token>'",
        "missing credential: send a bearer token or an API key",
        "refund of 45.00 USD for O-1003 issued",
        "token_count=12 tokens_used=3",
    ):
        assert redact(text) == text


def test_the_filter_rewrites_arguments_tracebacks_and_literal_secrets() -> None:
    record = logging.LogRecord(
        "httpx",
        logging.DEBUG,
        __file__,
        1,
        "sent %s with %r",
        ("hdrs", {"x-api-key": API_KEY}),
        None,
    )
    try:
        raise RuntimeError(f"failed with Authorization: Bearer {JWT}")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    literal = "a-configured-secret-value-42"
    record.msg = "sent %s with %r " + literal
    RedactingFilter([literal]).filter(record)
    text = logging.Formatter().format(record)
    for raw in (API_KEY, JWT, literal):
        assert raw not in text
    assert "RuntimeError" in text
    assert MASK in text
