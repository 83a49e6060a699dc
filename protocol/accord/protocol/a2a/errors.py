"""A2A's own errors read as contract codes, derived from a2a-sdk's tables (never copied).

a2a-sdk keeps one row per error class in two tables (``a2a.utils.errors``):

    JSON_RPC_ERROR_CODE_MAP   TaskNotFoundError -> -32001, ...
    A2A_ERROR_MAPPING         TaskNotFoundError -> (404, NOT_FOUND, reason "TASK_NOT_FOUND"), ...

The contract reads JSON-RPC codes (``accord.contracts.errors``: its own codes in
``JSONRPC_TO_CODE``, A2A's and JSON-RPC's standard ones in ``FOREIGN_JSONRPC_TO_CODE``). So each
SDK error class gets its contract code through its JSON-RPC code, and each REST reason through
its class: a new error in the SDK is read without an edit here, or fails the import (and a test)
when the contract has no reading for its code yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from a2a.utils.errors import A2A_ERROR_MAPPING, JSON_RPC_ERROR_CODE_MAP, A2AError

from accord.contracts.errors import ErrorCode, code_for_jsonrpc


def _codes_of_sdk_errors() -> dict[type[A2AError], ErrorCode]:
    out: dict[type[A2AError], ErrorCode] = {}
    for cls, number in JSON_RPC_ERROR_CODE_MAP.items():
        code = code_for_jsonrpc(number)
        if code is None:
            # Not an assert: this must hold under `python -O` too.
            raise RuntimeError(
                f"a2a-sdk error {cls.__name__} (JSON-RPC {number}) has no contract code: "
                "add its reading to accord.contracts.errors.FOREIGN_JSONRPC_TO_CODE"
            )
        out[cls] = code
    return out


A2A_ERROR_TO_CODE: Final[Mapping[type[A2AError], ErrorCode]] = _codes_of_sdk_errors()
"""Every a2a-sdk error class -> its contract code."""

A2A_REASON_TO_CODE: Final[Mapping[str, ErrorCode]] = {
    mapping.reason: A2A_ERROR_TO_CODE[cls] for cls, mapping in A2A_ERROR_MAPPING.items()
}
"""A2A's REST ``ErrorInfo.reason`` (``TASK_NOT_FOUND``, ...) -> contract code."""


def a2a_error_document() -> dict[str, Any]:
    """The table as data, for ``accord contracts export`` (other languages read A2A's errors
    the same way): one row per A2A error with its JSON-RPC code, REST status and reason."""
    rows = []
    for cls, code in A2A_ERROR_TO_CODE.items():
        rest = A2A_ERROR_MAPPING.get(cls)
        rows.append(
            {
                "error": cls.__name__,
                "jsonrpc_code": JSON_RPC_ERROR_CODE_MAP[cls],
                "rest_status": rest.http_code if rest else None,
                "rest_reason": rest.reason if rest else None,
                "code": code.value,
            }
        )
    return {"errors": rows}
