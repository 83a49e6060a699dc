"""A2A's own errors read as contract codes: derived from a2a-sdk's tables, total over them."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from a2a.utils import errors as sdk
from typer.testing import CliRunner

from accord.agents.cli.main import app
from accord.contracts.errors import (
    FOREIGN_JSONRPC_TO_CODE,
    JSONRPC_TO_CODE,
    AccordError,
    ErrorCode,
)
from accord.protocol.a2a.client_wire import error_from_response
from accord.protocol.a2a.errors import A2A_ERROR_TO_CODE, A2A_REASON_TO_CODE, a2a_error_document
from accord.protocol.a2a.server_errors import rewrite_rest, rewrite_rpc

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
