"""Contract codes on the errors a2a-sdk writes itself (unknown task, not cancelable, parse
errors...), so a client reads every error of an Accord agent the same way.

The SDK answers with A2A's own ``ErrorInfo`` (domain ``a2a-protocol.org``, A2A's reason). A2A
1.0 (11.6, AIP-193) allows exactly one ErrorInfo, and a client written elsewhere reads A2A's
reason from it: so this filter keeps the SDK's entry and adds the contract code to its metadata
(``ERROR_INFO_CODE_KEY``), where :meth:`AccordError.from_rest` reads it back. It also replaces
the message of an internal error, which the SDK fills with Python exception text, by a generic
one. It holds back only JSON answers (one body message each); event streams pass through.

On REST it also gives an error A2A names the HTTP status and ``google.rpc`` status of A2A 1.0.1's
table (section 5.4), which the registry holds, where a2a-sdk 1.3.0 spells them otherwise: a
terminal task's cancel is 409 (the SDK: 400), UNSUPPORTED_OPERATION is ``UNIMPLEMENTED`` (the
SDK: ``FAILED_PRECONDITION``). Its JSON answers are labelled ``application/a2a+json``
(media_types.py).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from starlette.types import Message, Send

from accord.contracts.errors import (
    A2A_REASON_OF_JSONRPC,
    ERROR_INFO_TYPE,
    REGISTRY,
    AccordError,
    ErrorCode,
    code_for_jsonrpc,
    error_info_code,
)
from accord.contracts.keys import ERROR_INFO_CODE_KEY
from accord.protocol.a2a.errors import A2A_REASON_TO_CODE
from accord.protocol.a2a.server.media_types import ACCEPTED, REST_ANSWER
from accord.protocol.held_response import Rewritten, content_type, holding

E = ErrorCode
GENERIC_INTERNAL: Final = "internal error"
SDK_UNKNOWN_REASON: Final = "UNKNOWN_ERROR"  # a2a-sdk's reason for an A2AError it does not name
_RPC_ERROR_PREFIX: Final = b'{"error":'


def _ours(infos: object) -> bool:
    """The details already carry a contract code (our own errors, raised through the SDK)."""
    return isinstance(infos, list) and any(error_info_code(i) is not None for i in infos)


def _contract_body(error: Mapping[str, Any]) -> bool:
    """Our own ``AccordError.to_http`` shape ({"error": {"code": "PERMISSION_DENIED", ...}}),
    which the agent's JSON routes (``/approvals``, ``/stats``) answer with."""
    code = error.get("code")
    return isinstance(code, str) and code in ErrorCode.__members__


def _carried(infos: object) -> ErrorCode | None:
    """The contract code of an AccordError the SDK rendered as an unknown error
    (contract_errors.ContractError: reason UNKNOWN_ERROR, the code in its metadata)."""
    if isinstance(infos, list):
        for info in infos:
            if _is_error_info(info) and info.get("reason") == SDK_UNKNOWN_REASON:
                return error_info_code(info)
    return None


def _a2a_reason(infos: object) -> str | None:
    if isinstance(infos, list):
        for info in infos:
            if _is_error_info(info) and isinstance(info.get("reason"), str):
                return str(info["reason"])
    return None


def _is_error_info(info: object) -> bool:
    return isinstance(info, dict) and info.get("@type") == ERROR_INFO_TYPE


def _with_code(infos: object, error: AccordError, jsonrpc_code: int | None) -> list[Any]:
    """The SDK's details with the contract code in its one ErrorInfo (ours if it sent none),
    every text made safe; other detail types (``BadRequest``) are kept."""
    out = _safe_infos(infos)
    for info in out:
        if _is_error_info(info):
            metadata = info.get("metadata")
            info["metadata"] = {
                **(metadata if isinstance(metadata, dict) else {}),
                ERROR_INFO_CODE_KEY: error.code.value,
            }
            if info.get("reason") not in A2A_REASON_TO_CODE:  # the SDK's "UNKNOWN_ERROR"
                info.update(error.error_info(jsonrpc_code) | {"metadata": info["metadata"]})
            return out
    return [error.error_info(jsonrpc_code), *out]


_PARSE_FAILURE = re.compile(r"Failed to (?:parse|load)")
_FIELD = re.compile(r"Failed to parse (\w+) field")


def safe_message(message: str) -> str:
    """The SDK's message, unless it is protobuf's parse error text, which quotes Python
    exceptions and the caller's own values ("... which is ../../etc/passwd", "TypeError: ...");
    then where the request broke the schema, and nothing else."""
    if not _PARSE_FAILURE.search(message):
        return message
    where = ".".join(_FIELD.findall(message))
    suffix = f" at {where}" if where else ""
    return f"the request does not match the A2A 1.0 schema{suffix}"


def rewrite_rpc(body: bytes) -> bytes:
    if not body.startswith(_RPC_ERROR_PREFIX):
        return body
    payload: dict[str, Any] = json.loads(body)
    error = payload.get("error")
    if not isinstance(error, dict):
        return body
    if (carried := _carried(error.get("data"))) is not None:
        typed = AccordError(carried, safe_message(str(error.get("message") or "")))
        payload["error"] = typed.to_jsonrpc_error()
        return json.dumps(payload, ensure_ascii=False).encode()
    if _ours(error.get("data")):
        return body
    raw = error.get("code")
    number = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
    code = (code_for_jsonrpc(number) if number is not None else None) or E.INTERNAL
    if code is E.INTERNAL:
        error["message"] = GENERIC_INTERNAL
        error.pop("data", None)
    error["message"] = safe_message(str(error.get("message") or ""))
    error["data"] = _with_code(error.get("data"), AccordError(code, error["message"]), number)
    return json.dumps(payload, ensure_ascii=False).encode()


def a2a_rest_status(reason: str | None) -> tuple[int, str] | None:
    """A2A 1.0.1's HTTP status and ``google.rpc`` status of the error A2A names ``reason``,
    where the registry's row is that very error (its JSON-RPC code is A2A's): the registry
    holds the spec's table. None for a reason read as a broader code (METHOD_NOT_FOUND,
    EXTENSION_SUPPORT_REQUIRED...), whose status the SDK's answer keeps."""
    code = A2A_REASON_TO_CODE.get(reason or "")
    if code is None:
        return None
    spec = REGISTRY[code]
    if A2A_REASON_OF_JSONRPC.get(spec.jsonrpc_code) != reason:
        return None
    return spec.rest_status, spec.rest_reason


def rewrite_rest(body: bytes) -> bytes:
    return rewrite_rest_error(body).body


def rewrite_rest_error(body: bytes) -> Rewritten:
    """The SDK's REST error with contract codes, safe texts and A2A's status (module doc)."""
    try:
        payload = json.loads(body)
    except ValueError:
        return Rewritten(body)
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict) or _contract_body(error):
        return Rewritten(body)
    if (carried := _carried(error.get("details"))) is not None:
        typed = AccordError(carried, safe_message(str(error.get("message") or "")))
        rest_status, rest_body = typed.to_rest()
        return Rewritten(json.dumps(rest_body, ensure_ascii=False).encode(), status=rest_status)
    if _ours(error.get("details")):
        message = str(error.get("message") or "")
        if safe_message(message) == message:
            return Rewritten(body)
        return Rewritten(_with_safe_messages(payload, error))
    reason = _a2a_reason(error.get("details"))
    code = A2A_REASON_TO_CODE.get(reason or "", E.INTERNAL)
    if code is E.INTERNAL:
        error["message"] = GENERIC_INTERNAL
        error.pop("details", None)
    error["message"] = safe_message(str(error.get("message") or ""))
    accord = AccordError(code, str(error.get("message") or ""))
    error["details"] = _with_code(error.get("details"), accord, None)
    status: int | None = None
    if (spelled := a2a_rest_status(reason)) is not None:
        status, error["status"] = spelled
        error["code"] = status
    return Rewritten(json.dumps(payload, ensure_ascii=False).encode(), status=status)


def _safe_infos(infos: object) -> list[Any]:
    """The SDK's own ErrorInfo entries with their metadata texts made safe (its
    ``parseError`` quotes Python exceptions)."""
    if not isinstance(infos, list):
        return []
    for info in infos:
        metadata = info.get("metadata") if isinstance(info, dict) else None
        if isinstance(metadata, dict):
            for key, value in metadata.items():
                if isinstance(value, str):
                    metadata[key] = safe_message(value)
    return infos


def _with_safe_messages(payload: dict[str, Any], error: dict[str, Any]) -> bytes:
    error["message"] = safe_message(str(error.get("message") or ""))
    error["details"] = _safe_infos(error.get("details"))
    return json.dumps(payload, ensure_ascii=False).encode()


def contract_error_filter(send: Send, is_rpc: bool) -> Send:
    """Wrap ``send`` so that JSON error answers carry contract codes (see module docstring)."""

    json_types = tuple(t.encode() for t in sorted(ACCEPTED))

    def hold(start: Message) -> bool:
        json_body = content_type(start).startswith(json_types)
        return json_body and (is_rpc or start["status"] >= 400)

    def rewrite(_start: Message, body: bytes) -> Rewritten:
        if is_rpc:
            with contextlib.suppress(ValueError):  # not JSON after all: send what the SDK wrote
                body = rewrite_rpc(body)
            return Rewritten(body)
        with contextlib.suppress(ValueError):
            out = rewrite_rest_error(body)
            return Rewritten(out.body, REST_ANSWER, out.status)
        return Rewritten(body)

    return holding(send, hold, rewrite)
