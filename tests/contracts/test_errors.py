from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accord.contracts import REGISTRY, AccordError, ErrorCode, RetryClass
from accord.contracts.errors import (
    FOREIGN_JSONRPC_TO_CODE,
    HTTP_CLASS_TO_CODE,
    HTTP_STATUS_TO_CODE,
    JSONRPC_TO_CODE,
    code_for_http_status,
    parse_code,
)
from accord.contracts.keys import MCP_ERROR_META_KEY

DESIGN_CODES = {
    "RETRYABLE_TIMEOUT": "retry",
    "UNAVAILABLE": "retry",
    "RATE_LIMITED": "retry",
    "OUT_OF_STOCK": "replan",
    "POLICY_DENIED": "stop",
    "BUDGET_EXHAUSTED": "stop",
    "INVALID_INPUT": "stop",
    "UNAUTHENTICATED": "stop",
    "PERMISSION_DENIED": "stop",
    "NOT_FOUND": "stop",
    "IDEMPOTENCY_CONFLICT": "stop",
    "CANCELED": "stop",
    "CONTRACT_VIOLATION": "stop",
    "VERSION_UNSUPPORTED": "stop",
    "INTERNAL": "stop",
}

details_st = st.dictionaries(
    st.text(min_size=1, max_size=10),
    st.one_of(st.integers(), st.text(max_size=20), st.booleans()),
    max_size=4,
)


def test_registry_is_total() -> None:
    assert set(REGISTRY) == set(ErrorCode)
    for code, spec in REGISTRY.items():
        assert spec.code is code
        assert spec.meaning
        assert len(spec.meaning.splitlines()) == 1
        assert 400 <= spec.rest_status < 600
        assert 400 <= spec.http_status < 600


@pytest.mark.parametrize(("code", "retry"), sorted(DESIGN_CODES.items()))
def test_design_codes_have_their_retry_class(code: str, retry: str) -> None:
    assert REGISTRY[ErrorCode(code)].retry is RetryClass(retry)


def test_jsonrpc_codes_are_unique_and_foreign_codes_do_not_collide() -> None:
    assert len(JSONRPC_TO_CODE) == len(REGISTRY)
    assert not set(FOREIGN_JSONRPC_TO_CODE) & set(JSONRPC_TO_CODE)


@pytest.mark.parametrize("code", list(ErrorCode))
@given(message=st.text(min_size=1, max_size=80), details=details_st)
def test_every_wire_form_round_trips(
    code: ErrorCode, message: str, details: dict[str, Any]
) -> None:
    err = AccordError(code, message, details)
    assert AccordError.from_jsonrpc_error(json.loads(json.dumps(err.to_jsonrpc_error()))) == err
    status, body = err.to_rest()
    assert status == err.spec.rest_status
    assert AccordError.from_rest(status, json.loads(json.dumps(body))) == err
    status, body = err.to_http()
    assert AccordError.from_http(status, body) == err
    result = err.to_mcp_result()
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert AccordError.from_mcp_result(json.loads(json.dumps(result))) == err
    assert AccordError.from_dict(err.to_dict()) == err


@pytest.mark.parametrize("code", list(ErrorCode))
def test_jsonrpc_code_alone_identifies_the_error(code: ErrorCode) -> None:
    # A peer that drops error.data still gives us the code back.
    wire = AccordError(code).to_jsonrpc_error()
    assert AccordError.from_jsonrpc_error({"code": wire["code"], "message": "x"}).code is code


def test_mcp_error_has_code_in_meta_and_json_text() -> None:
    result = AccordError(ErrorCode.NOT_FOUND, "no such order").to_mcp_result()
    assert result["_meta"][MCP_ERROR_META_KEY]["code"] == "NOT_FOUND"
    assert result["_meta"][MCP_ERROR_META_KEY]["retry"] == "stop"
    text = json.loads(result["content"][0]["text"])
    assert text["error"]["code"] == "NOT_FOUND"


def test_foreign_errors_never_guess_retry_from_text() -> None:
    foreign = {"isError": True, "content": [{"type": "text", "text": "timeout, please retry"}]}
    err = AccordError.from_mcp_result(foreign)
    assert err.code is ErrorCode.INTERNAL
    assert err.retry_class is RetryClass.STOP
    assert AccordError.from_jsonrpc_error({"code": -32001, "message": "x"}).code is (
        ErrorCode.NOT_FOUND
    )
    assert AccordError.from_jsonrpc_error({"code": -32700}).code is ErrorCode.INVALID_INPUT
    assert AccordError.from_jsonrpc_error({"code": 12345}).code is ErrorCode.INTERNAL
    assert AccordError.from_rest(503, None).code is ErrorCode.UNAVAILABLE
    assert AccordError.from_rest(418, {"error": "teapot"}).code is ErrorCode.INVALID_INPUT


def test_unknown_reason_from_another_domain_is_ignored() -> None:
    wire = {
        "code": -32057,
        "message": "denied",
        "data": [{"reason": "NOT_FOUND", "domain": "evil.example"}],
    }
    assert AccordError.from_jsonrpc_error(wire).code is ErrorCode.PERMISSION_DENIED


def test_parse_code_defaults() -> None:
    assert parse_code("NOT_FOUND") is ErrorCode.NOT_FOUND
    assert parse_code("nope") is ErrorCode.INTERNAL
    assert parse_code(42, ErrorCode.UNAVAILABLE) is ErrorCode.UNAVAILABLE


def test_default_message_is_the_meaning() -> None:
    err = AccordError("RATE_LIMITED")
    assert err.message == REGISTRY[ErrorCode.RATE_LIMITED].meaning
    assert str(err).startswith("RATE_LIMITED: ")
    with pytest.raises(ValueError, match="NOPE"):
        AccordError("NOPE")


# -- reading a bare HTTP status ---------------------------------------------------------------

# The statuses whose bare reading is not the registry's code for that status, and why: a bare
# 422 is a framework's schema error (not a business rule), a bare 500 or 502 is a server or a
# gateway failing without a word (UNAVAILABLE, retried), while ours always send their body.
REREAD_STATUSES = {
    422: (ErrorCode.POLICY_DENIED, ErrorCode.INVALID_INPUT),
    500: (ErrorCode.INTERNAL, ErrorCode.UNAVAILABLE),
    502: (ErrorCode.CONTRACT_VIOLATION, ErrorCode.UNAVAILABLE),
}


def _codes_sent_with(status: int) -> set[ErrorCode]:
    return {c for c, s in REGISTRY.items() if status in (s.http_status, s.rest_status)}


def test_every_status_the_registry_sends_has_one_reading() -> None:
    sent = {s.http_status for s in REGISTRY.values()} | {s.rest_status for s in REGISTRY.values()}
    assert sent <= set(HTTP_STATUS_TO_CODE)
    assert all(400 <= status < 600 for status in HTTP_STATUS_TO_CODE)


def test_the_status_table_is_the_registry_read_back() -> None:
    reread = {}
    for status, code in HTTP_STATUS_TO_CODE.items():
        senders = _codes_sent_with(status)
        if senders and code not in senders:
            reread[status] = (*senders, code)
    assert reread == REREAD_STATUSES


@pytest.mark.parametrize("code", list(ErrorCode))
def test_a_code_alone_on_its_status_round_trips(code: ErrorCode) -> None:
    for status in {REGISTRY[code].http_status, REGISTRY[code].rest_status}:
        if _codes_sent_with(status) == {code} and status not in REREAD_STATUSES:
            assert code_for_http_status(status) is code


def test_statuses_outside_the_table_read_by_their_class() -> None:
    assert code_for_http_status(418) is ErrorCode.INVALID_INPUT
    assert code_for_http_status(421) is ErrorCode.INVALID_INPUT
    assert code_for_http_status(507) is ErrorCode.UNAVAILABLE
    assert code_for_http_status(522) is ErrorCode.UNAVAILABLE
    assert code_for_http_status(302) is ErrorCode.INTERNAL
    for status in range(400, 600):
        expected = HTTP_STATUS_TO_CODE.get(status, HTTP_CLASS_TO_CODE[status // 100])
        assert code_for_http_status(status) is expected
        assert AccordError.from_rest(status, None).code is expected
        assert AccordError.from_http(status, {"error": "not ours"}).code is expected
