"""Issue #30's smaller auth findings, against a real agent (policy-check, development mode):

- a JWT whose ``exp`` (or ``nbf``, ``iat``) is a numeric string was accepted: NumericDate is a
  JSON number (RFC 7519 section 2), and the claim is now refused by name;
- a push config's ``authentication.credentials`` reached DEBUG logs in clear, and a value ending
  in ``secret``/``token``/``passwd`` shifted the redaction onto the next key.

(Guessable secrets and weak or readable API key files: test_production_mode.py.)
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any, Final

import httpx
import jwt
import pytest

from accord.protocol.auth import mint_token
from accord.protocol.telemetry.redaction import MASK, redact
from tests.security.tokens_support import VERSION, bearer, clean_env, list_tasks, serve
from tests.support.processes import Service

SECRET: Final = "auth-findings-" + "9c1e7a3f5b2d8e4a" * 3
PUSH_CREDENTIAL: Final = "push-cred-7f3a9c1e5b2d8e4a"


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    base = tmp_path_factory.mktemp("auth-findings")
    env = clean_env(
        base / "data",
        ACCORD_JWT_SECRET=SECRET,
        ACCORD_LOG_LEVEL="DEBUG",
        ACCORD_DEV="1",
        ACCORD_PUSH_ALLOWED_HOSTS="hooks.example.test",
    )
    with serve("policy", env, base) as service:
        yield service


def _token(**claims: Any) -> str:
    now = int(time.time())
    body: dict[str, Any] = {
        "iss": "accord",
        "aud": "accord",
        "sub": "C-01",
        "app": "accord",
        "roles": ["customer"],
        "iat": now,
        "exp": now + 600,
        "jti": uuid.uuid4().hex,
    }
    body.update(claims)
    return jwt.encode(body, SECRET, algorithm="HS256")


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
def test_a_time_claim_given_as_a_numeric_string_is_refused(policy: Service, claim: str) -> None:
    now = int(time.time())
    value = {"exp": now + 600, "nbf": now - 10, "iat": now}[claim]
    assert list_tasks(policy.url, bearer(_token(**{claim: value}))).status_code == 200
    answer = list_tasks(policy.url, bearer(_token(**{claim: str(value)})))
    assert answer.status_code == 401
    assert f"'{claim}'" in answer.headers["www-authenticate"]


def test_push_credentials_never_reach_the_debug_log(policy: Service) -> None:
    customer = bearer(mint_token("C-01", ["customer"], secret=SECRET))
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": f"m-{uuid.uuid4().hex}",
                "role": "ROLE_USER",
                "parts": [{"text": "is O-1001 refundable?"}],
            }
        },
    }
    task = httpx.post(policy.url + "/", json=send, headers={**VERSION, **customer}).json()
    task_id = task["result"]["task"]["id"]
    create = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "CreateTaskPushNotificationConfig",
        "params": {
            "taskId": task_id,
            "url": "https://hooks.example.test/accord",
            "token": "push-token-value-1",
            "authentication": {"scheme": "Bearer", "credentials": PUSH_CREDENTIAL},
        },
    }
    httpx.post(policy.url + "/", json=create, headers={**VERSION, **customer})
    log = policy.log()
    assert "DEBUG" in log
    assert PUSH_CREDENTIAL not in log


@pytest.mark.parametrize("name", ["refresh_token", "my_secret", "old_passwd"])
def test_a_value_ending_like_a_secret_name_does_not_move_the_redaction(name: str) -> None:
    text = f"{{'label': '{name}', 'note': 'visible', 'credentials': '{PUSH_CREDENTIAL}'}}"
    out = redact(text)
    assert "'note': 'visible'" in out  # the next key's value is not taken for the secret
    assert PUSH_CREDENTIAL not in out
    assert MASK in out
