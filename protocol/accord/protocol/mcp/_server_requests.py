"""The request checks of a tool server over HTTP, after its credential gate and before the MCP
SDK: the caller's rate, the body's size, strict JSON, the JSON-RPC shape, and no GET stream.

Cheap before expensive, as on the A2A side (docs/limits.md): the rate is checked before the body
is read, the size before it is parsed, and the body is parsed once (kept in the scope for every
later reader, request_body.py). A refusal of the HTTP request (405, 413, 429) has the contract's
HTTP body, like the credential gate's 401; a refusal of the JSON-RPC message is a JSON-RPC error
carrying the contract's ErrorInfo, with JSON-RPC's code (-32700 parse error, -32600 invalid
request).

What the SDK answers itself is filtered on the way out: its validation errors quote pydantic
(field paths, the caller's values, a link to pydantic's docs); the caller gets where the request
broke the MCP schema and nothing else.

``GET /mcp`` is answered 405: a stateless server has nothing to push, and the SDK's standalone
SSE stream was held open forever by anybody (the MCP spec allows 405 for this GET).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from accord.contracts.errors import AccordError, ErrorCode, code_for_http_status
from accord.protocol.held_response import content_type, holding
from accord.protocol.limits import CallerLimits
from accord.protocol.mcp._server_auth import principal_of
from accord.protocol.request_body import read_body

DEFAULT_MAX_BODY_BYTES: Final = 1024 * 1024
JSONRPC_PARSE_ERROR: Final = -32700
JSONRPC_INVALID_REQUEST: Final = -32600
_PYDANTIC_TEXT: Final = re.compile(r"validation error|errors\.pydantic\.dev|Input should be")
_FIELD: Final = re.compile(r"\n([A-Za-z_][\w.\[\]]*)\n")


class McpRequestGate:
    def __init__(
        self,
        app: ASGIApp,
        *,
        endpoint_path: str,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        limits: CallerLimits | None = None,
    ) -> None:
        self.app = app
        self.endpoint_path = endpoint_path
        self.max_body_bytes = max_body_bytes
        self.limits = limits or CallerLimits()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.endpoint_path:
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "GET")
        if method == "GET":
            await _answer(
                send,
                405,
                None,
                _error(
                    ErrorCode.UNSUPPORTED_OPERATION,
                    "no event stream: "
                    "this server answers every request in its response (stateless)",
                ),
                extra=[(b"allow", b"POST, DELETE")],
            )
            return
        principal = principal_of(scope)
        if principal is not None:
            try:
                self.limits.admit(principal)
            except AccordError as limited:
                wait = limited.details.get("retry_after_s", 1)
                retry = str(max(1, math.ceil(float(wait))))
                await _answer(send, 429, None, limited, extra=[(b"retry-after", retry.encode())])
                return
        if method != "POST":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await _answer(send, 413, None, _too_large(self.max_body_bytes))
            return
        body, receive = await read_body(scope, receive, limit=self.max_body_bytes)
        if body is None:
            await _answer(send, 413, None, _too_large(self.max_body_bytes))
            return
        parsed = body.json
        if body.problem is not None or (body.raw and not body.is_json):
            reason = body.problem or "empty"
            bad = _error(ErrorCode.INVALID_INPUT, f"request body is not valid JSON: {reason}")
            await _answer(send, 400, None, bad, JSONRPC_PARSE_ERROR)
            return
        problem = _shape_problem(parsed)
        if problem is not None:
            rpc_id = parsed.get("id") if isinstance(parsed, dict) else None
            invalid = _error(ErrorCode.INVALID_INPUT, f"invalid JSON-RPC message: {problem}")
            await _answer(send, 400, _safe_id(rpc_id), invalid, JSONRPC_INVALID_REQUEST)
            return
        await self.app(scope, receive, _sanitizing(send))


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def _shape_problem(parsed: Any) -> str | None:
    """Why ``parsed`` is not one JSON-RPC 2.0 message (request, notification or response)."""
    if not isinstance(parsed, dict):
        return "a message must be a JSON object (batches are not supported)"
    if parsed.get("jsonrpc") != "2.0":
        return "'jsonrpc' must be \"2.0\""
    if "id" in parsed and (
        isinstance(parsed["id"], bool) or not isinstance(parsed["id"], str | int)
    ):
        return "'id' must be a string or an integer"
    if "method" in parsed:
        if not isinstance(parsed["method"], str) or not parsed["method"]:
            return "'method' must be a non-empty string"
        if "params" in parsed and not isinstance(parsed["params"], dict):
            return "'params' must be an object"
        return None
    if "id" in parsed and ("result" in parsed or "error" in parsed):
        return None  # a response to a request of ours (this server sends none, the SDK answers)
    return "a message needs a 'method' (or an 'id' with a 'result' or 'error')"


def _safe_id(value: Any) -> Any:
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _error(code: ErrorCode, message: str) -> AccordError:
    return AccordError(code, message)


def _too_large(limit: int) -> AccordError:
    return AccordError(
        ErrorCode.PAYLOAD_TOO_LARGE, f"request body exceeds {limit} bytes", {"limit": limit}
    )


async def _answer(
    send: Send,
    status: int,
    rpc_id: Any,
    error: AccordError,
    jsonrpc_code: int | None = None,
    *,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    if jsonrpc_code is None:  # the HTTP request itself was refused
        body = json.dumps(error.to_http()[1], ensure_ascii=False).encode()
    else:
        rpc_error = error.to_jsonrpc_error()
        rpc_error["code"] = jsonrpc_code
        payload = {"jsonrpc": "2.0", "id": rpc_id, "error": rpc_error}
        body = json.dumps(payload, ensure_ascii=False).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def safe_sdk_error(body: bytes) -> bytes:
    """An SDK JSON-RPC error whose message quotes pydantic, with where the message broke the
    schema instead (and our ErrorInfo); anything else unchanged."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return body
    message: str = error["message"]
    if not _PYDANTIC_TEXT.search(message):
        return body
    fields = sorted(set(_FIELD.findall(message)))[:3]
    where = f" at {', '.join(fields)}" if fields else ""
    safe = f"the message does not match the MCP schema{where}"
    code = error.get("code")
    ours = AccordError(ErrorCode.INVALID_INPUT, safe).to_jsonrpc_error()
    error["message"] = safe
    error["data"] = ours["data"]
    if not isinstance(code, int):
        error["code"] = ours["code"]
    return json.dumps(payload, ensure_ascii=False).encode()


def _contract_http_error(status: int, text: bytes) -> bytes:
    """A plain-text refusal of the SDK's transport checks ("Invalid Host header", "Invalid
    Content-Type header": fixed texts, safe to pass on) as the contract's HTTP body."""
    message = text.decode("utf-8", "replace").strip()[:200] or None
    return json.dumps(AccordError(code_for_http_status(status), message).to_http()[1]).encode()


def _sanitizing(send: Send) -> Send:
    """Hold back the SDK's error answers (one body each) to make them safe and typed."""

    def hold(start: Message) -> bool:
        return content_type(start).startswith(b"application/json") or start["status"] >= 400

    def rewrite(start: Message, body: bytes) -> tuple[bytes, bytes | None]:
        if not content_type(start).startswith(b"application/json"):
            return _contract_http_error(start["status"], body), b"application/json"
        if b'"error"' in body[:200]:
            return safe_sdk_error(body), None
        return body, None

    return holding(send, hold, rewrite)
