"""Malformed A2A requests found by fuzzing: each gets a typed contract error (never a 500 or
INTERNAL), nothing is stored, every later listing still works, and the next request on the
same keep-alive connection is served."""

from __future__ import annotations

import json
from typing import Any, Final

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from tests.hostile.conftest import token
from tests.support.processes import Service

pytestmark = pytest.mark.timeout(120)

HEADERS: Final = {"A2A-Version": "1.0", "Content-Type": "application/json"}
SEND_PREFIX: Final = (
    '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
    '{"messageId":"m-1","role":"ROLE_USER","parts":[{"data":{"x":'
)
SEND_SUFFIX: Final = "}}]}}}"

# name -> (body, extra headers, expected contract code, expected JSON-RPC code or None)
CASES: Final[dict[str, tuple[bytes, dict[str, str], ErrorCode, int | None]]] = {
    "NaN in a DataPart": (
        (SEND_PREFIX + "NaN" + SEND_SUFFIX).encode(),
        {},
        ErrorCode.INVALID_INPUT,
        -32700,
    ),
    "Infinity in a DataPart": (
        (SEND_PREFIX + "-Infinity" + SEND_SUFFIX).encode(),
        {},
        ErrorCode.INVALID_INPUT,
        -32700,
    ),
    "1e309 in a DataPart": (
        (SEND_PREFIX + "1e309" + SEND_SUFFIX).encode(),
        {},
        ErrorCode.INVALID_INPUT,
        -32700,
    ),
    "JSON nested 1,000 deep": (
        ('{"a":' * 1000 + "1" + "}" * 1000).encode(),
        {},
        ErrorCode.INVALID_INPUT,
        -32700,
    ),
    "JSON nested 40 deep inside a request": (
        (SEND_PREFIX + '{"a":' * 40 + "1" + "}" * 40 + SEND_SUFFIX).encode(),
        {},
        ErrorCode.INVALID_INPUT,
        -32700,
    ),
    "method is a list": (
        b'{"jsonrpc":"2.0","id":1,"method":["SendMessage"],"params":{}}',
        {},
        ErrorCode.INVALID_INPUT,
        -32600,
    ),
    "params is a string": (
        b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":"x"}',
        {},
        ErrorCode.INVALID_INPUT,
        -32600,
    ),
    "a batch": (
        b'[{"jsonrpc":"2.0","id":1,"method":"ListTasks"}]',
        {},
        ErrorCode.INVALID_INPUT,
        -32600,
    ),
    "bytes that are not UTF-8": (b"\xff\xfe\xfd", {}, ErrorCode.INVALID_INPUT, -32700),
    "an A2A-Version of 5,000 digits": (
        b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}',
        {"A2A-Version": "1" * 5000},
        ErrorCode.VERSION_UNSUPPORTED,
        None,
    ),
}
TIMESTAMP_PAST_2262: Final = (
    b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":'
    b'{"statusTimestampAfter":"2300-01-01T00:00:00Z"}}'
)


def _post(http: httpx.Client, body: bytes, headers: dict[str, str]) -> httpx.Response:
    auth = {"Authorization": f"Bearer {token()}"}
    return http.post("/", content=body, headers={**HEADERS, **auth, **headers})


def _listing(http: httpx.Client) -> dict[str, Any]:
    r = _post(http, b'{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}', {})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    assert "result" in body, body
    return body["result"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_request_gets_a_typed_error_and_the_connection_lives(
    a2a_service: Service, case: str
) -> None:
    body, headers, code, rpc_code = CASES[case]
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        before = _listing(http)
        r = _post(http, body, headers)
        assert r.status_code < 500, (r.status_code, r.text[:300])
        answer = r.json()
        assert "Traceback" not in r.text, r.text[:300]
        error = AccordError.from_jsonrpc_error(answer["error"])
        assert error.code is code, (case, answer)
        if rpc_code is not None:
            assert answer["error"]["code"] == rpc_code
        # Nothing was stored, listing still works, and the same connection serves on.
        after = _listing(http)
        assert after.get("totalSize", 0) == before.get("totalSize", 0)
    assert "Traceback" not in a2a_service.log()


def test_a_timestamp_past_2262_matches_nothing(a2a_service: Service) -> None:
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        r = _post(http, TIMESTAMP_PAST_2262, {})
        assert r.status_code == 200, r.text
        assert r.json()["result"].get("tasks", []) == []


def test_a_rest_send_with_nan_is_a_400(a2a_service: Service) -> None:
    body = json.dumps({"message": {"messageId": "m-r", "role": "ROLE_USER", "parts": []}})
    body = body.replace("[]", '[{"data": {"x": NaN}}]')
    auth = {"Authorization": f"Bearer {token()}"}
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        r = http.post("/message:send", content=body, headers={**HEADERS, **auth})
        assert r.status_code == 400, r.text
        assert AccordError.from_rest(r.status_code, r.json()).code is ErrorCode.INVALID_INPUT


def test_an_unauthenticated_deep_body_is_refused_for_its_credential(a2a_service: Service) -> None:
    deep = ('{"a":' * 1000 + "1" + "}" * 1000).encode()
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        r = http.post("/", content=deep, headers=HEADERS)
        assert r.status_code == 401
        assert AccordError.from_jsonrpc_error(r.json()["error"]).code is ErrorCode.UNAUTHENTICATED
    assert "RecursionError" not in a2a_service.log()


def test_a_refusal_of_an_agent_route_says_why(a2a_service: Service) -> None:
    if a2a_service.name != "orchestrator":
        pytest.skip("/approvals and /stats are the orchestrator's")
    auth = {"Authorization": f"Bearer {token()}", "A2A-Version": "1.0"}
    with httpx.Client(base_url=a2a_service.url, timeout=30) as http:
        for path in ("/approvals", "/stats"):
            r = http.get(path, headers=auth)
            assert r.status_code == 403
            error = AccordError.from_http(r.status_code, r.json())
            assert error.code is ErrorCode.PERMISSION_DENIED
            assert "internal" not in r.text.lower(), r.text


def _stored_bytes(service: Service) -> int:
    data = service.log_path.parent / "data"
    return sum(f.stat().st_size for f in data.iterdir() if f.is_file())


def test_one_message_can_make_a_service_write_only_a_bounded_amount(a2a_service: Service) -> None:
    limit = 64 * 1024  # ACCORD_MAX_MESSAGE_BYTES' default

    def send(size: int, http: httpx.Client) -> httpx.Response:
        part = {"text": "refund O-1001 " + "x" * (size - 14)}
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": f"m-big-{size}", "role": "ROLE_USER", "parts": [part]}
            },
        }
        return _post(http, json.dumps(call).encode(), {})

    with httpx.Client(base_url=a2a_service.url, timeout=60) as http:
        before = _stored_bytes(a2a_service)
        refused = send(limit + 1, http)
        error = AccordError.from_jsonrpc_error(refused.json()["error"])
        assert error.code is ErrorCode.PAYLOAD_TOO_LARGE
        assert _stored_bytes(a2a_service) == before  # refused before any task was created
        accepted = send(limit, http)
        assert "result" in accepted.json(), accepted.text[:300]
        grew = _stored_bytes(a2a_service) - before
    assert grew < 8 * limit, grew
