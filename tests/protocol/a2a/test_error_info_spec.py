"""Errors to the letter of A2A 1.0 (9.5 JSON-RPC, 11.6 HTTP+JSON, AIP-193), over a real agent
process: exactly one ``google.rpc.ErrorInfo`` per error; for an error A2A names, A2A's domain
and reason (a client written elsewhere reads it, a2a-sdk's own REST client among them), with
the contract code in its metadata, which Accord's readers map back exactly as before. The gate's
own answers (version, credentials, size, parse) are held to the same shape.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from a2a.client.transports.rest import _parse_rest_error
from a2a.utils.errors import TaskNotFoundError, VersionNotSupportedError

from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    AccordError,
    ErrorCode,
)
from accord.contracts.keys import ERROR_INFO_CODE_KEY
from accord.protocol.a2a.client.wire import error_from_response
from tests.protocol.a2a.wire_client import VERSION, message
from tests.support.processes import Service

E = ErrorCode
A2A = A2A_ERROR_DOMAIN


def _only_error_info(details: Any) -> dict[str, Any]:
    infos = [d for d in details if isinstance(d, dict) and d.get("@type") == ERROR_INFO_TYPE]
    assert len(infos) == 1, f"AIP-193 allows one ErrorInfo, got {details!r}"
    info: dict[str, Any] = infos[0]
    return info


def _rpc(agent: Service, headers: dict[str, str], body: bytes | dict[str, Any]) -> Any:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = httpx.post(
        agent.url + "/",
        content=content,
        headers={"content-type": "application/json", **headers},
        timeout=30,
    )
    return r.json()


def _get_task(task_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": task_id}}


def _bearer(token: str, version: bool = True) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **(VERSION if version else {})}


@pytest.mark.parametrize("version", [None, "2.0"])
def test_the_gates_version_error_is_a2as_version_not_supported(
    agent: Service, token_for: Callable[..., str], version: str | None
) -> None:
    headers = _bearer(token_for("C-01"), version=False)
    if version is not None:
        headers["A2A-Version"] = version
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message()}}
    rpc = _rpc(agent, headers, send)["error"]
    rest = httpx.post(agent.url + "/message:send", json={"message": message()}, headers=headers)
    for info in (_only_error_info(rpc["data"]), _only_error_info(rest.json()["error"]["details"])):
        assert (info["domain"], info["reason"]) == (A2A, "VERSION_NOT_SUPPORTED")
        assert info["metadata"][ERROR_INFO_CODE_KEY] == E.VERSION_UNSUPPORTED.value
    assert rpc["code"] == -32009
    # A client written elsewhere reads A2A's reason: a2a-sdk's REST client does.
    assert isinstance(_parse_rest_error(rest.json(), ""), VersionNotSupportedError)
    # Accord's readers map it back to the contract code, with its details.
    for error in (
        AccordError.from_jsonrpc_error(rpc),
        error_from_response(rest.status_code, rest.json()),
    ):
        assert error.code is E.VERSION_UNSUPPORTED
        assert error.details["supported"] == ["1.0"]


def test_an_unknown_task_is_a2as_task_not_found_on_both_bindings(
    agent: Service, token_for: Callable[..., str]
) -> None:
    headers = _bearer(token_for("C-01"))
    missing = str(uuid.uuid4())
    rpc = _rpc(agent, headers, _get_task(missing))["error"]
    rest = httpx.get(f"{agent.url}/tasks/{missing}", headers=headers)
    assert rest.status_code == 404
    for info in (_only_error_info(rpc["data"]), _only_error_info(rest.json()["error"]["details"])):
        assert (info["domain"], info["reason"]) == (A2A, "TASK_NOT_FOUND")
        assert info["metadata"][ERROR_INFO_CODE_KEY] == E.NOT_FOUND.value
    assert isinstance(_parse_rest_error(rest.json(), ""), TaskNotFoundError)
    assert AccordError.from_jsonrpc_error(rpc).code is E.NOT_FOUND
    assert error_from_response(404, rest.json()).code is E.NOT_FOUND


def _rpc_body(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, **fields}).encode()


@pytest.mark.parametrize(
    ("body", "reason", "code"),
    [
        (b"{not json", "INVALID_REQUEST", E.INVALID_INPUT),
        (_rpc_body(jsonrpc="1.0", method="GetTask"), "INVALID_REQUEST", E.INVALID_INPUT),
        (_rpc_body(method="NoSuchMethod"), "METHOD_NOT_FOUND", E.UNSUPPORTED_OPERATION),
        (
            _rpc_body(method="SendMessage", params={"message": {"parts": "x"}}),
            "INVALID_PARAMS",
            E.INVALID_INPUT,
        ),
    ],
)
def test_json_rpc_protocol_errors_carry_one_a2a_error_info_with_the_code(
    agent: Service, token_for: Callable[..., str], body: bytes, reason: str, code: ErrorCode
) -> None:
    error = _rpc(agent, _bearer(token_for("C-01")), body)["error"]
    info = _only_error_info(error["data"])
    assert (info["domain"], info["reason"]) == (A2A, reason)
    assert info["metadata"][ERROR_INFO_CODE_KEY] == code.value
    assert AccordError.from_jsonrpc_error(error).code is code


def test_errors_a2a_has_no_name_for_carry_one_error_info_of_ours(
    agent: Service, token_for: Callable[..., str]
) -> None:
    """Credentials and size are not A2A errors: one ErrorInfo in Accord's domain, reason = the
    contract code (no second entry for a client to pick the wrong one from)."""
    nobody = httpx.post(agent.url + "/message:send", json={"message": message()}, headers=VERSION)
    assert nobody.status_code == 401
    info = _only_error_info(nobody.json()["error"]["details"])
    assert (info["domain"], info["reason"]) == (ERROR_DOMAIN, E.UNAUTHENTICATED.value)
    big = {"message": message(text="x" * (1024 * 1024 + 10))}
    large = httpx.post(agent.url + "/message:send", json=big, headers=_bearer(token_for("C-01")))
    assert large.status_code == 413
    info = _only_error_info(large.json()["error"]["details"])
    assert (info["domain"], info["reason"]) == (ERROR_DOMAIN, E.PAYLOAD_TOO_LARGE.value)
    assert error_from_response(413, large.json()).details["limit"] == 1024 * 1024
