"""What every answer to a fuzzed request must be: no 5xx, nothing internal in the body, an error
that carries a contract code (never INTERNAL), and the connection kept open."""

from __future__ import annotations

import json
from typing import Any, Final

import httpx

from accord.contracts.errors import (
    A2A_ERROR_DOMAIN,
    ERROR_DOMAIN,
    AccordError,
    ErrorCode,
    code_for_jsonrpc,
)
from accord.contracts.keys import ERROR_INFO_CODE_KEY, MCP_ERROR_META_KEY

LEAKS: Final = (
    "Traceback",
    'File "',
    "sqlite3.",
    "psycopg",
    "sqlalchemy",
    "RecursionError",
    "errors.pydantic.dev",
    "validation error for",
    "object has no attribute",
    "object is not",
    "TypeError",
    "ValueError",
    "KeyError",
    "integer string conversion",
)


def _carries_code(infos: Any) -> bool:
    """An ErrorInfo that names the contract code: ours (reason = the code) or A2A's (the code in
    its metadata)."""
    return isinstance(infos, list) and any(
        isinstance(i, dict)
        and (
            i.get("domain") == ERROR_DOMAIN
            or (
                i.get("domain") == A2A_ERROR_DOMAIN
                and isinstance(i.get("metadata"), dict)
                and ERROR_INFO_CODE_KEY in i["metadata"]
            )
        )
        for i in infos
    )


def _rpc_error_ok(error: Any) -> str | None:
    if not isinstance(error, dict):
        return "JSON-RPC error is not an object"
    if _carries_code(error.get("data")):
        code = AccordError.from_jsonrpc_error(error).code
        return "INTERNAL" if code is ErrorCode.INTERNAL else None
    raw = error.get("code")
    mapped = code_for_jsonrpc(raw) if isinstance(raw, int) else None
    if mapped is None:
        return f"JSON-RPC code {raw!r} is not in the contract's mapping"
    return "INTERNAL" if mapped is ErrorCode.INTERNAL else None


def _tool_result_ok(result: Any) -> str | None:
    if isinstance(result, dict) and result.get("isError"):
        meta = result.get("_meta") or {}
        payload = meta.get(MCP_ERROR_META_KEY) if isinstance(meta, dict) else None
        if not isinstance(payload, dict) or "code" not in payload:
            return "tool error without a contract code in _meta"
        if payload["code"] == ErrorCode.INTERNAL.value:
            return "INTERNAL"
    return None


def _json_bodies(response: httpx.Response) -> list[Any]:
    text = response.text
    if "text/event-stream" in response.headers.get("content-type", ""):
        return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    return [json.loads(text)] if text.strip() else []


def problem(response: httpx.Response) -> str | None:
    """Why ``response`` breaks the oracle, or None."""
    if response.status_code >= 500:
        return f"HTTP {response.status_code}"
    if response.headers.get("connection", "").lower() == "close":
        return "the server closed the connection"
    text = response.text
    for leak in LEAKS:
        if leak in text:
            return f"leaks {leak!r}"
    try:
        bodies = _json_bodies(response)
    except ValueError:
        return None if response.status_code < 400 else "error body is not JSON"
    for body in bodies:
        if not isinstance(body, dict):
            continue
        if "error" in body and "jsonrpc" in body:
            found = _rpc_error_ok(body["error"])
            if found:
                return found
        elif "error" in body and response.status_code >= 400:
            error = body["error"]
            if not isinstance(error, dict):
                return "REST error is not an object"
            if _carries_code(error.get("details")):
                code = AccordError.from_rest(response.status_code, body).code
            elif isinstance(error.get("code"), str):  # our own JSON routes' shape
                code = AccordError.from_http(response.status_code, body).code
            else:
                return "REST error without a contract code"
            if code is ErrorCode.INTERNAL:
                return "INTERNAL"
        if "result" in body:
            found = _tool_result_ok(body["result"])
            if found:
                return found
    if response.status_code >= 400 and not bodies:
        return f"HTTP {response.status_code} with an empty body"
    return None
