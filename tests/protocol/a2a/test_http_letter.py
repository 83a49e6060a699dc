"""A2A 1.0.1's HTTP details, over a real agent process: card caching (ETag, Last-Modified, 304),
the ``application/a2a+json`` media type on both bindings, ContentTypeNotSupportedError for any
other, and the REST statuses of section 5.4 (a terminal task's cancel is 409, an unsupported
operation ``UNIMPLEMENTED``), each agreeing with the JSON-RPC binding's code."""

from __future__ import annotations

import json
from collections.abc import Callable
from email.utils import formatdate, parsedate_to_datetime
from typing import Any

import httpx
import pytest
from a2a.client.transports.rest import _parse_rest_error
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)

from accord.contracts.errors import A2A_ERROR_DOMAIN, AccordError, ErrorCode
from accord.contracts.keys import ERROR_INFO_CODE_KEY
from accord.protocol.a2a.client.wire import error_from_response
from tests.protocol.a2a.wire_client import auth, message
from tests.support.processes import Service

A2A_JSON = "application/a2a+json"
E = ErrorCode


def _card(agent: Service, **headers: str) -> httpx.Response:
    return httpx.get(agent.url + AGENT_CARD_WELL_KNOWN_PATH, headers=headers, timeout=30)


def test_the_card_carries_validators_that_hold_for_the_served_card(agent: Service) -> None:
    first, second = _card(agent), _card(agent)
    assert first.status_code == second.status_code == 200
    for name in ("etag", "last-modified", "cache-control"):
        assert first.headers[name] == second.headers[name], name
    assert not first.headers["etag"].startswith("W/")  # the bytes are fixed: a strong tag
    assert parsedate_to_datetime(first.headers["last-modified"]).tzinfo is not None
    assert "max-age=" in first.headers["cache-control"]
    assert first.json()["name"]


def test_a_current_copy_of_the_card_is_not_modified(agent: Service) -> None:
    served = _card(agent)
    etag, modified = served.headers["etag"], served.headers["last-modified"]
    for headers in (
        {"If-None-Match": etag},
        {"If-None-Match": f'"other", W/{etag}'},
        {"If-Modified-Since": modified},
        {"If-Modified-Since": formatdate(usegmt=True)},
    ):
        answer = _card(agent, **headers)
        assert answer.status_code == 304, headers
        assert answer.content == b""
        assert answer.headers["etag"] == etag
        assert answer.headers["last-modified"] == modified


def test_a_stale_copy_of_the_card_is_sent_the_card(agent: Service) -> None:
    served = _card(agent)
    earlier = formatdate(parsedate_to_datetime(served.headers["last-modified"]).timestamp() - 60)
    for headers in (
        {"If-None-Match": '"not-this-card"'},
        {"If-Modified-Since": earlier},
        {"If-Modified-Since": "not a date"},
        # If-None-Match is evaluated first when sent (RFC 9110 13.2.2).
        {"If-None-Match": '"not-this-card"', "If-Modified-Since": formatdate(usegmt=True)},
    ):
        answer = _card(agent, **headers)
        assert answer.status_code == 200, headers
        assert answer.json() == served.json()


def _post(agent: Service, path: str, token: str, body: Any, content_type: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        agent.url + path,
        content=content,
        headers={**auth(token), "Content-Type": content_type},
        timeout=30,
    )


def _send_rpc(data: dict[str, Any], task_id: str | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message(data, task_id=task_id)},
    }


@pytest.mark.parametrize("content_type", [A2A_JSON, "application/json; charset=utf-8"])
def test_both_json_media_types_are_read_on_both_bindings(
    agent: Service, token_for: Callable[..., str], content_type: str
) -> None:
    token = token_for("C-01")
    rpc = _post(agent, "/", token, _send_rpc({"mode": "complete"}), content_type)
    assert rpc.status_code == 200
    assert rpc.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # JSON-RPC answers application/json (A2A 1.0.1 section 9.1).
    assert rpc.headers["content-type"].startswith("application/json")
    rest = _post(
        agent, "/message:send", token, {"message": message({"mode": "complete"})}, content_type
    )
    assert rest.status_code == 200
    assert rest.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rest.headers["content-type"].startswith(A2A_JSON)


def test_rest_errors_are_labelled_with_the_a2a_media_type(
    agent: Service, token_for: Callable[..., str]
) -> None:
    headers = auth(token_for("C-01"))
    missing = httpx.get(f"{agent.url}/tasks/no-such-task", headers=headers, timeout=30)
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith(A2A_JSON)
    unversioned = httpx.get(
        f"{agent.url}/tasks/no-such-task", headers={"Authorization": headers["Authorization"]}
    )
    assert unversioned.status_code == 400  # the gate's own refusal
    assert unversioned.headers["content-type"].startswith(A2A_JSON)


def _only_error_info(details: list[Any]) -> dict[str, Any]:
    infos = [d for d in details if d.get("@type", "").endswith("google.rpc.ErrorInfo")]
    assert len(infos) == 1, details
    info: dict[str, Any] = infos[0]
    return info


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", None),  # JSON, but labelled as something else
        ("application/x-www-form-urlencoded", b"a=b&c=d"),  # curl -d's default: not JSON
        ("application/xml", b"<message/>"),
    ],
)
def test_a_wrong_content_type_is_content_type_not_supported_on_both_bindings(
    agent: Service, token_for: Callable[..., str], content_type: str, body: bytes | None
) -> None:
    token = token_for("C-01")
    rpc = _post(agent, "/", token, body or _send_rpc({"mode": "complete"}), content_type)
    error = rpc.json()["error"]
    assert error["code"] == -32005  # not -32700: the caller named a type the agent does not read
    info = _only_error_info(error["data"])
    assert (info["domain"], info["reason"]) == (A2A_ERROR_DOMAIN, "CONTENT_TYPE_NOT_SUPPORTED")
    assert info["metadata"][ERROR_INFO_CODE_KEY] == E.CONTENT_TYPE_NOT_SUPPORTED.value
    assert AccordError.from_jsonrpc_error(error).code is E.CONTENT_TYPE_NOT_SUPPORTED

    send = body or json.dumps({"message": message({"mode": "complete"})}).encode()
    rest = _post(agent, "/message:send", token, send, content_type)
    assert rest.status_code == 415
    assert rest.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert isinstance(_parse_rest_error(rest.json(), ""), ContentTypeNotSupportedError)
    assert error_from_response(415, rest.json()).code is E.CONTENT_TYPE_NOT_SUPPORTED


def test_a_request_without_a_content_type_is_read_as_json(
    agent: Service, token_for: Callable[..., str]
) -> None:
    r = httpx.post(
        agent.url + "/",
        content=json.dumps(_send_rpc({"mode": "complete"})).encode(),
        headers=auth(token_for("C-01")),
        timeout=30,
    )
    assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def _completed_task(agent: Service, token: str) -> str:
    done = _post(agent, "/", token, _send_rpc({"mode": "complete"}), "application/json")
    task_id: str = done.json()["result"]["task"]["id"]
    return task_id


def test_cancelling_a_terminal_task_is_409_on_rest_and_32002_on_json_rpc(
    agent: Service, token_for: Callable[..., str]
) -> None:
    token = token_for("C-01")
    task_id = _completed_task(agent, token)
    rest = _post(agent, f"/tasks/{task_id}:cancel", token, {}, A2A_JSON)
    assert rest.status_code == 409
    assert rest.json()["error"]["code"] == 409
    assert rest.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert _only_error_info(rest.json()["error"]["details"])["reason"] == "TASK_NOT_CANCELABLE"
    assert isinstance(_parse_rest_error(rest.json(), ""), TaskNotCancelableError)
    assert error_from_response(409, rest.json()).code is E.TASK_NOT_CANCELABLE
    cancel = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task_id}}
    rpc = _post(agent, "/", token, cancel, "application/json").json()["error"]
    assert rpc["code"] == -32002
    assert AccordError.from_jsonrpc_error(rpc).code is E.TASK_NOT_CANCELABLE


def test_a_message_to_a_terminal_task_is_unimplemented_on_rest_and_32004_on_json_rpc(
    agent: Service, token_for: Callable[..., str]
) -> None:
    token = token_for("C-01")
    task_id = _completed_task(agent, token)
    again = {"message": message({"mode": "complete"}, task_id=task_id)}
    rest = _post(agent, "/message:send", token, again, A2A_JSON)
    assert rest.status_code == 400
    assert rest.json()["error"]["status"] == "UNIMPLEMENTED"
    assert _only_error_info(rest.json()["error"]["details"])["reason"] == "UNSUPPORTED_OPERATION"
    assert isinstance(_parse_rest_error(rest.json(), ""), UnsupportedOperationError)
    assert error_from_response(400, rest.json()).code is E.UNSUPPORTED_OPERATION
    rpc = _post(agent, "/", token, _send_rpc({"mode": "complete"}, task_id), "application/json")
    assert rpc.json()["error"]["code"] == -32004
    assert AccordError.from_jsonrpc_error(rpc.json()["error"]).code is E.UNSUPPORTED_OPERATION
