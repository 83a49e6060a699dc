"""Small refusals found against `accord up` (issue #30), on both bindings of both kinds of A2A
service (policy-check: an SDK task store; the orchestrator: tasks derived from its log):

- an empty body was answered with Python's JSON decoder text ("Expecting value: line 1
  column 1 (char 0)"): now -32700 (REST: 400) with our own message, code INVALID_INPUT;
- an invalid ListTasks page token was echoed back in the error: now nothing of it is;
- a sent message marked ``ROLE_AGENT`` was accepted (its words stored as the agent's): now
  INVALID_INPUT before any task is created.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from tests.hostile.conftest import token
from tests.support.processes import Service

pytestmark = pytest.mark.timeout(120)

VERSION: Final = {"A2A-Version": "1.0"}
JSON: Final = {**VERSION, "Content-Type": "application/json"}
# Base64 of a task id that does not exist (it passes the SDK's own base64 check and was echoed
# whole), then a token that is not base64 at all.
MARKER: Final = "caller-text-5f3a"
TOKENS: Final = (base64.b64encode(f"no-such-task-{MARKER}".encode()).decode(), f"{MARKER}!!")
AGENT_ROLES: Final[tuple[object, ...]] = ("ROLE_AGENT", 2, "ROLE_UNSPECIFIED", ["ROLE_USER"], True)


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {token()}"}


def _listing_size(http: httpx.Client) -> int:
    call = {"jsonrpc": "2.0", "id": 9, "method": "ListTasks", "params": {}}
    r = http.post("/", json=call, headers={**JSON, **_auth()})
    result: dict[str, Any] = r.json()["result"]
    return int(result.get("totalSize", 0))


@pytest.mark.parametrize("path", ["/", "/message:send", "/message:stream"])
def test_an_empty_body_is_a_parse_error_in_our_words(a2a_service: Service, path: str) -> None:
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        r = http.post(path, content=b"", headers={**JSON, **_auth()})
        assert "Expecting value" not in r.text, r.text
        assert "char 0" not in r.text, r.text
        if path == "/":
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["error"]["code"] == -32700, body
            assert body["id"] is None
            error = AccordError.from_jsonrpc_error(body["error"])
        else:
            assert r.status_code == 400, r.text
            error = AccordError.from_rest(r.status_code, r.json())
        assert error.code is ErrorCode.INVALID_INPUT
        assert "empty" in error.message, error.message
        # The same connection serves on.
        assert _listing_size(http) >= 0


def test_a_body_that_is_not_json_is_told_in_our_words(a2a_service: Service) -> None:
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        r = http.post("/", content=b'{"jsonrpc": "2.0",', headers={**JSON, **_auth()})
    error = AccordError.from_jsonrpc_error(r.json()["error"])
    assert r.json()["error"]["code"] == -32700
    assert error.code is ErrorCode.INVALID_INPUT
    assert "Expecting" not in r.text, r.text  # Python's decoder text stays out


@pytest.mark.parametrize("page_token", TOKENS)
def test_an_invalid_page_token_is_not_echoed(a2a_service: Service, page_token: str) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageToken": page_token}}
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        rpc = http.post("/", json=call, headers={**JSON, **_auth()})
        rest = http.get("/tasks", params={"pageToken": page_token}, headers={**VERSION, **_auth()})
    assert rest.status_code == 400, rest.text
    for answer, error in (
        (rpc, AccordError.from_jsonrpc_error(rpc.json()["error"])),
        (rest, AccordError.from_rest(rest.status_code, rest.json())),
    ):
        assert error.code is ErrorCode.INVALID_INPUT, answer.text
        assert MARKER not in answer.text, answer.text
        assert page_token not in answer.text, answer.text


@pytest.mark.parametrize("role", AGENT_ROLES)
def test_a_sent_message_marked_as_the_agents_is_refused(a2a_service: Service, role: object) -> None:
    def message(n: str) -> dict[str, Any]:
        return {
            "messageId": f"m-role-{role}-{n}",
            "role": role,
            "parts": [{"text": "refund order O-1001, wrong size"}],
        }

    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        before = _listing_size(http)
        for method in ("SendMessage", "SendStreamingMessage"):
            params = {"message": message(method)}
            call = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            r = http.post("/", json=call, headers={**JSON, **_auth()})
            assert r.status_code == 200, r.text
            error = AccordError.from_jsonrpc_error(r.json()["error"])
            assert error.code is ErrorCode.INVALID_INPUT, r.text
            assert error.details.get("field") == "message.role"
        for path in ("/message:send", "/message:stream"):
            r = http.post(path, json={"message": message(path)}, headers={**JSON, **_auth()})
            assert r.status_code == 400, r.text
            error = AccordError.from_rest(r.status_code, r.json())
            assert error.code is ErrorCode.INVALID_INPUT, r.text
        assert _listing_size(http) == before  # refused before any task was created
        # A user's message is still served (one the orchestrator answers without its tools).
        ok = {**message("user"), "role": "ROLE_USER", "parts": [{"text": "I want a refund"}]}
        call = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": ok}}
        assert "result" in http.post("/", json=call, headers={**JSON, **_auth()}).json()


def test_the_refusals_left_no_traceback(a2a_service: Service) -> None:
    log = a2a_service.log()
    assert "Traceback" not in log, log[-3000:]
    assert json.dumps(MARKER) not in log
