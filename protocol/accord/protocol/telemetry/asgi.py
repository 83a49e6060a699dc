"""The server side of every request: the caller's trace context, a SERVER span, request metrics.

Wrapped around a service's whole ASGI app by ``accord serve``. It reads the operation from the
request itself, so a span and a metric say ``SendMessage`` or ``tools/call`` rather than
``POST /``: the JSON-RPC ``method`` of a (small) POST body, or the A2A REST route. The body is
read here but parsed only by the gate behind it, after authentication; the span is named once
the request has been served (an unauthenticated body is never parsed at all).

A2A requests carry W3C trace context in HTTP headers: this middleware extracts it and opens
``A2A {operation}`` under it. MCP requests carry it in ``params._meta`` (the MCP SDK speaks
httpx2, which nobody instruments), so for MCP the SERVER span is ``execute_tool {tool}``, opened
by the tool server from ``_meta`` (and the same over stdio); here MCP gets metrics only.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any, Final

from opentelemetry import context, propagate
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from accord.contracts.keys import HEALTH_PATH, READY_PATH, SKILL_SCHEMAS_PATH, TRACEPARENT_KEY
from accord.protocol.request_body import RequestBody, read_body
from accord.protocol.telemetry import instruments
from accord.protocol.telemetry.spans import ERROR_TYPE, OPERATION, PROTOCOL, TRACER, mark_error

SKIPPED_PATHS: Final = frozenset({HEALTH_PATH, READY_PATH})
PEEK_LIMIT: Final = 64 * 1024  # a JSON-RPC envelope is small; bigger bodies pass unread
ERROR_BODY_LIMIT: Final = 8 * 1024
_PROPAGATION_HEADERS: Final = frozenset({TRACEPARENT_KEY.encode(), b"tracestate", b"baggage"})

# A2A HTTP+JSON routes (any tenant prefix) -> the JSON-RPC method of the same operation.
_REST: Final = (
    ("POST", re.compile(r"/message:send$"), "SendMessage"),
    ("POST", re.compile(r"/message:stream$"), "SendStreamingMessage"),
    ("POST", re.compile(r"/tasks/[^/]+:cancel$"), "CancelTask"),
    ("GET", re.compile(r"/tasks/[^/]+:subscribe$"), "SubscribeToTask"),
    ("POST", re.compile(r"/tasks/[^/]+:subscribe$"), "SubscribeToTask"),
    ("GET", re.compile(r"/tasks/[^/]+/pushNotificationConfigs"), "TaskPushNotificationConfig"),
    ("POST", re.compile(r"/tasks/[^/]+/pushNotificationConfigs"), "TaskPushNotificationConfig"),
    ("GET", re.compile(r"/tasks/[^/:]+$"), "GetTask"),
    ("GET", re.compile(r"/tasks$"), "ListTasks"),
    ("GET", re.compile(r"/\.well-known/agent-card\.json$"), "GetAgentCard"),
    ("GET", re.compile(re.escape(SKILL_SCHEMAS_PATH) + "$"), "GetSkillSchemas"),
    ("GET", re.compile(r"/extendedAgentCard$"), "GetExtendedAgentCard"),
)


def rest_operation(method: str, path: str) -> str:
    for verb, pattern, name in _REST:
        if verb == method and pattern.search(path):
            return name
    return f"HTTP {method}"  # never the raw path: it would make one metric series per task id


def body_operation(body: RequestBody) -> tuple[str, str | None] | None:
    """(JSON-RPC method, tool name for tools/call) of a body, or None when it is not JSON-RPC."""
    parsed = body.json
    if not isinstance(parsed, dict) or not isinstance(parsed.get("method"), str):
        return None
    method: str = parsed["method"][:64]
    params = parsed.get("params")
    tool = params.get("name") if isinstance(params, dict) else None
    return method, tool[:128] if isinstance(tool, str) else None


def _served_operation(body: RequestBody | None, status: int) -> str | None:
    """The JSON-RPC method of a served request, read from its body once something behind this
    middleware parsed it (the A2A gate, after authentication) or accepted it (status < 400: an
    MCP transport parsed it anyway). None for a refused caller: their body is not worth
    parsing."""
    if body is None or not (body.parsed or status < 400):
        return None
    found = body_operation(body)
    return found[0] if found is not None else None


def error_type_of(status: int, body: bytes) -> str:
    """The ``error.type`` of an error answer: the contract code it carries
    ({"error": {"code": ...}}), else its status."""
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) and code.isupper() and len(code) <= 64 else str(status)


class ServerTelemetry:
    """ASGI middleware; ``protocol`` is ``a2a`` (span + metrics) or ``mcp`` (metrics)."""

    def __init__(self, app: ASGIApp, *, protocol: str) -> None:
        self.app = app
        self.protocol = protocol
        self._spans = protocol == "a2a"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in SKIPPED_PATHS:
            await self.app(scope, receive, send)
            return
        method: str = scope.get("method", "GET")
        body: RequestBody | None = None
        if method == "POST":
            # Read once for every later reader (the gate, the SDK's route): request_body.py.
            body, receive = await read_body(scope, receive, limit=PEEK_LIMIT)
        operation = rest_operation(method, scope.get("path", ""))

        outcome = _Outcome()
        started = time.perf_counter()
        try:
            if self._spans:
                await self._with_span(scope, receive, outcome.wrap(send), operation, outcome, body)
            else:
                await self.app(scope, receive, outcome.wrap(send))
        except BaseException as exc:
            outcome.error = outcome.error or type(exc).__qualname__
            raise
        finally:
            operation = _served_operation(body, outcome.status) or operation
            attributes: dict[str, Any] = {
                PROTOCOL: self.protocol,
                OPERATION: operation,
                "http.response.status_code": outcome.status,
            }
            if outcome.error is not None:
                attributes[ERROR_TYPE] = outcome.error
            instruments.server_requests.add(1, attributes)
            instruments.server_duration.record(time.perf_counter() - started, attributes)

    async def _with_span(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        operation: str,
        outcome: _Outcome,
        body: RequestBody | None,
    ) -> None:
        carrier = {
            k.decode("latin-1"): v.decode("latin-1")
            for k, v in scope.get("headers", ())
            if k in _PROPAGATION_HEADERS
        }
        # No header: the span starts a trace (extracting nothing would cost ~10 us anyway).
        parent = propagate.extract(carrier) if carrier else context.Context()
        attributes = {
            PROTOCOL: self.protocol,
            OPERATION: operation,
            "rpc.system": "a2a",
            "rpc.method": operation,
            "http.request.method": scope.get("method", "GET"),
            "url.path": scope.get("path", ""),
        }
        token = context.attach(parent)
        try:
            with TRACER.start_as_current_span(
                f"A2A {operation}",
                kind=SpanKind.SERVER,
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                try:
                    await self.app(scope, receive, send)
                except BaseException as exc:
                    mark_error(span, exc)
                    raise
                served = _served_operation(body, outcome.status)
                if served is not None:
                    span.update_name(f"A2A {served}")
                    span.set_attributes({OPERATION: served, "rpc.method": served})
                span.set_attribute("http.response.status_code", outcome.status)
                if outcome.error is not None:
                    span.set_attribute(ERROR_TYPE, outcome.error)
                    if outcome.status >= 500:
                        span.set_status(Status(StatusCode.ERROR, outcome.error))
        finally:
            context.detach(token)


class _Outcome:
    """What the response said: its status and, for an error, the contract code in its body."""

    def __init__(self) -> None:
        self.status = 500  # until a response starts: an app that raised answered nothing
        self.error: str | None = None
        self._error_body = bytearray()

    def wrap(self, send: Send) -> Callable[[Message], Any]:
        async def sending(message: Message) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                self.status = int(message["status"])
            elif kind == "http.response.body" and self.status >= 400:
                if len(self._error_body) < ERROR_BODY_LIMIT:
                    self._error_body += message.get("body", b"")[:ERROR_BODY_LIMIT]
                if not message.get("more_body", False):
                    self.error = error_type_of(self.status, bytes(self._error_body))
            await send(message)

        return sending
