"""Log lines carry trace, span and task ids; the server middleware names operations and hands
the caller's context to the app (without any SDK installed, as in the embedded default)."""

from __future__ import annotations

import io
import json
import logging

import pytest
from opentelemetry import context
from starlette.types import Message, Receive, Scope, Send

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.request_body import RequestBody
from accord.protocol.settings import AccordSettings
from accord.protocol.telemetry import bind_task, spans
from accord.protocol.telemetry.asgi import (
    ServerTelemetry,
    body_operation,
    error_type_of,
    rest_operation,
)
from accord.protocol.telemetry.logs import JsonFormatter, TraceContextFilter, configure_logging

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _logger(stream: io.StringIO, formatter: logging.Formatter) -> logging.Logger:
    handler = logging.StreamHandler(stream)
    handler.addFilter(TraceContextFilter("policy"))
    handler.setFormatter(formatter)
    logger = logging.getLogger("tests.telemetry.logs")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger


def test_json_lines_carry_trace_span_and_task() -> None:
    stream = io.StringIO()
    logger = _logger(stream, JsonFormatter())
    token = context.attach(spans.context_of(TP) or context.Context())
    try:
        with bind_task("task-7"):
            logger.warning("checked %s", "O-1001")
    finally:
        context.detach(token)
    logger.info("outside")
    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["message"] == "checked O-1001"
    assert inside["service"] == "policy"
    assert inside["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert inside["span_id"] == "00f067aa0ba902b7"
    assert inside["task_id"] == "task-7"
    assert inside["level"] == "WARNING"
    assert "trace_id" not in outside
    assert "task_id" not in outside


def test_text_format_is_the_default_and_json_is_chosen_by_env() -> None:
    root = logging.getLogger()
    before = root.level
    text = configure_logging("risk", AccordSettings())
    structured = configure_logging("risk", AccordSettings(log_format="json", log_level="info"))
    try:
        assert not isinstance(text.formatter, JsonFormatter)
        assert isinstance(structured.formatter, JsonFormatter)
        assert root.level == logging.INFO
    finally:
        root.removeHandler(text)
        root.removeHandler(structured)
        root.setLevel(before)


@pytest.mark.parametrize(
    ("method", "path", "operation"),
    [
        ("POST", "/message:send", "SendMessage"),
        ("POST", "/tenant-a/message:stream", "SendStreamingMessage"),
        ("GET", "/tasks/abc-123", "GetTask"),
        ("POST", "/tasks/abc-123:cancel", "CancelTask"),
        ("GET", "/tasks", "ListTasks"),
        ("GET", "/.well-known/agent-card.json", "GetAgentCard"),
        ("GET", "/accord/skill-schemas.json", "GetSkillSchemas"),
        ("GET", "/some/task-id/that/must/not/become/a/series", "HTTP GET"),
    ],
)
def test_rest_routes_are_named_by_operation(method: str, path: str, operation: str) -> None:
    assert rest_operation(method, path) == operation


def test_json_rpc_bodies_are_named_by_method_and_tool() -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "refunds.issue"}}
    assert body_operation(RequestBody(json.dumps(call).encode())) == ("tools/call", "refunds.issue")
    assert body_operation(RequestBody(b'{"jsonrpc":"2.0","id":1,"method":"SendMessage"}')) == (
        "SendMessage",
        None,
    )
    assert body_operation(RequestBody(b"not json")) is None
    assert body_operation(RequestBody(b"[1, 2]")) is None


def test_error_answers_are_named_by_their_contract_code() -> None:
    status, body = AccordError(ErrorCode.UNAUTHENTICATED).to_http()
    assert error_type_of(status, json.dumps(body).encode()) == ErrorCode.UNAUTHENTICATED.value
    assert error_type_of(502, b"<html>bad gateway</html>") == "502"


async def test_the_app_runs_in_the_callers_context_and_reads_every_chunk() -> None:
    seen: dict[str, object] = {}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask"}).encode()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen["traceparent"] = spans.current_traceparent()
        received = b""
        while True:
            message = await receive()
            received += message.get("body", b"")
            if not message.get("more_body", False):
                break
        seen["body"] = received
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    chunks = [body[:10], body[10:]]

    async def receive() -> Message:
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"traceparent", TP.encode()), (b"authorization", b"Bearer x")],
    }
    await ServerTelemetry(app, protocol="a2a")(scope, receive, send)
    assert seen["traceparent"] == TP  # no SDK: the caller's own context, passed through
    assert seen["body"] == body
    assert sent[0]["status"] == 200
    assert spans.current_traceparent() is None  # detached afterwards
