"""A2A's own errors read as contract codes: derived from a2a-sdk's tables, total over them."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from a2a.utils import errors as sdk
from typer.testing import CliRunner

from accord.cli.main import app
from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    A2A_REASON_OF_JSONRPC,
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    FOREIGN_JSONRPC_TO_CODE,
    JSONRPC_TO_CODE,
    AccordError,
    ErrorCode,
)
from accord.contracts.keys import ERROR_INFO_CODE_KEY
from accord.protocol.a2a.client.wire import error_from_response
from accord.protocol.a2a.errors import A2A_ERROR_TO_CODE, A2A_REASON_TO_CODE, a2a_error_document
from accord.protocol.a2a.server.errors import rewrite_rest, rewrite_rpc

SDK_ERRORS = sorted(
    (
        cls
        for _, cls in inspect.getmembers(sdk, inspect.isclass)
        if issubclass(cls, sdk.A2AError) and cls is not sdk.A2AError
    ),
    key=lambda cls: cls.__name__,
)


def test_every_sdk_error_has_a_contract_code() -> None:
    assert SDK_ERRORS  # the SDK still defines its errors where we look
    assert set(SDK_ERRORS) == set(A2A_ERROR_TO_CODE)
    assert {m.reason for m in sdk.A2A_ERROR_MAPPING.values()} == set(A2A_REASON_TO_CODE)


@pytest.mark.parametrize("cls", SDK_ERRORS, ids=lambda cls: cls.__name__)
def test_jsonrpc_and_rest_readings_agree(cls: type[sdk.A2AError]) -> None:
    code = A2A_ERROR_TO_CODE[cls]
    number = sdk.JSON_RPC_ERROR_CODE_MAP[cls]
    assert AccordError.from_jsonrpc_error({"code": number, "message": "x"}).code is code
    mapping = sdk.A2A_ERROR_MAPPING.get(cls)
    if mapping is not None:
        assert A2A_REASON_TO_CODE[mapping.reason] is code


def test_the_contract_reads_only_codes_a2a_defines() -> None:
    sdk_numbers = set(sdk.JSON_RPC_ERROR_CODE_MAP.values())
    assert set(FOREIGN_JSONRPC_TO_CODE) <= sdk_numbers
    assert sdk_numbers <= set(JSONRPC_TO_CODE) | set(FOREIGN_JSONRPC_TO_CODE)


@pytest.mark.parametrize("cls", list(sdk.A2A_ERROR_MAPPING), ids=lambda cls: cls.__name__)
def test_sdk_written_errors_get_their_code_on_both_bindings(cls: type[sdk.A2AError]) -> None:
    """What the server adds to an error a2a-sdk wrote is what a client reads from it."""
    mapping = sdk.A2A_ERROR_MAPPING[cls]
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": mapping.reason,
        "domain": "a2a-protocol.org",
    }
    rest = {"error": {"code": mapping.http_code, "status": mapping.grpc_status, "details": [info]}}
    ours = json.loads(rewrite_rest(json.dumps(rest).encode()))
    assert error_from_response(mapping.http_code, ours).code is A2A_ERROR_TO_CODE[cls]
    # A peer that does not add our ErrorInfo is read through the same table.
    assert error_from_response(mapping.http_code, rest).code is A2A_ERROR_TO_CODE[cls]
    rpc = {"jsonrpc": "2.0", "id": 1, "error": {"code": sdk.JSON_RPC_ERROR_CODE_MAP[cls]}}
    ours = json.loads(rewrite_rpc(json.dumps(rpc).encode()))
    assert error_from_response(200, ours).code is A2A_ERROR_TO_CODE[cls]


def test_contract_export_writes_the_a2a_table(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["contracts", "export", str(tmp_path)])
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "a2a-errors.json").read_text(encoding="utf-8"))
    assert written == a2a_error_document()
    rows = {row["error"]: row for row in written["errors"]}
    assert rows["TaskNotFoundError"] == {
        "error": "TaskNotFoundError",
        "jsonrpc_code": -32001,
        "rest_status": 404,
        "rest_reason": "TASK_NOT_FOUND",
        "code": ErrorCode.NOT_FOUND.value,
    }
    assert {row["code"] for row in rows.values()} <= {c.value for c in ErrorCode}
    errors = json.loads((tmp_path / "errors.json").read_text(encoding="utf-8"))
    assert errors["http_status_codes"]["503"] == ErrorCode.UNAVAILABLE.value
    assert errors["http_status_class_codes"] == {"4xx": "INVALID_INPUT", "5xx": "UNAVAILABLE"}


def test_the_contracts_a2a_reasons_are_the_sdks() -> None:
    """accord.contracts spells A2A's ErrorInfo reasons without importing a2a-sdk (any language
    reads them from the export); they must be the SDK's, code by code. -32700 is the one the
    SDK's table lacks: its REST binding answers a parse failure as INVALID_REQUEST."""
    sdk_reasons = {
        sdk.JSON_RPC_ERROR_CODE_MAP[cls]: mapping.reason
        for cls, mapping in sdk.A2A_ERROR_MAPPING.items()
    }
    assert {k: v for k, v in A2A_REASON_OF_JSONRPC.items() if k != -32700} == sdk_reasons
    assert A2A_REASON_OF_JSONRPC[-32700] == "INVALID_REQUEST"


@pytest.mark.parametrize("code", list(ErrorCode))
def test_exactly_one_error_info_and_a2as_where_a2a_names_the_error(code: ErrorCode) -> None:
    error = AccordError(code, "m", {"k": 1})
    _, rest = error.to_rest()
    for infos in (error.to_jsonrpc_error()["data"], rest["error"]["details"]):
        assert len(infos) == 1
        reason = A2A_REASON_OF_JSONRPC.get(error.spec.jsonrpc_code)
        if reason is None:
            assert (infos[0]["domain"], infos[0]["reason"]) == (ERROR_DOMAIN, code.value)
        else:
            assert (infos[0]["domain"], infos[0]["reason"]) == (A2A_ERROR_DOMAIN, reason)
            assert infos[0]["metadata"][ERROR_INFO_CODE_KEY] == code.value


def test_the_previous_shape_is_still_read() -> None:
    """Accord 0.x sent two ErrorInfo entries, ours first: a new client still reads it."""
    old = {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "gone",
            "details": [
                {"@type": ERROR_INFO_TYPE, "reason": "NOT_FOUND", "domain": ERROR_DOMAIN,
                 "metadata": {"message": "gone", "details": '{"id": "t-1"}'}},
                {"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": A2A_ERROR_DOMAIN},
            ],
        }
    }  # fmt: skip
    error = error_from_response(404, old)
    assert (error.code, error.details) == (ErrorCode.NOT_FOUND, {"id": "t-1"})
