"""Structured logs that carry the trace, the span and the task they belong to.

``ACCORD_LOG_FORMAT=json`` writes one JSON object per line to stderr::

    {"ts": "2026-11-29T23:41:02.125Z", "level": "WARNING", "logger": "accord.protocol.a2a",
     "message": "...", "service": "triage", "trace_id": "4bf9…", "span_id": "00f0…",
     "task_id": "7d1c…"}

Otherwise a readable line with the same fields. ``ACCORD_LOG_LEVEL`` sets the level (default
WARNING, as before: a service does not log per request unless asked). The trace id is there
even without an exporter: the server's middleware puts the caller's context in place either way.
Secrets are redacted from every line (:mod:`accord.protocol.telemetry.redaction`).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Final

from opentelemetry import trace
from opentelemetry.trace import format_span_id, format_trace_id

from accord.protocol.settings import AccordSettings, current
from accord.protocol.telemetry.redaction import RedactingFilter

TEXT_FORMAT: Final = (
    "%(asctime)s %(levelname)s %(name)s [%(service)s trace=%(trace_id)s span=%(span_id)s "
    "task=%(task_id)s] %(message)s"
)

current_task_id: ContextVar[str | None] = ContextVar("accord_task_id", default=None)
"""The A2A task (or workflow) being worked on, for log lines; set with :func:`bind_task`."""


@contextmanager
def bind_task(task_id: str | None) -> Iterator[None]:
    token = current_task_id.set(task_id)
    try:
        yield
    finally:
        current_task_id.reset(token)


class TraceContextFilter(logging.Filter):
    """Adds ``service``, ``trace_id``, ``span_id`` and ``task_id`` to every record."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = trace.get_current_span().get_span_context()
        record.service = self.service
        record.trace_id = format_trace_id(ctx.trace_id) if ctx.is_valid else None
        record.span_id = format_span_id(ctx.span_id) if ctx.is_valid else None
        record.task_id = current_task_id.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("service", "trace_id", "span_id", "task_id"):
            value = getattr(record, key, None)
            if value is not None:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_logging(service: str, settings: AccordSettings | None = None) -> logging.Handler:
    """One stderr handler on the root logger, JSON or text; returns it (tests remove it).

    Its :class:`~accord.protocol.telemetry.redaction.RedactingFilter` rewrites every record
    it writes, whichever logger made it (the SDKs' loggers propagate here: ``accord serve``
    leaves uvicorn's logging to this handler too), so no secret reaches the log at any level."""
    settings = current() if settings is None else settings
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(TraceContextFilter(service))
    handler.addFilter(
        RedactingFilter(
            secret.get_secret_value()
            for secret in (
                settings.jwt_secret,
                settings.token,
                settings.api_key,
                settings.push_secrets_key,
            )
            if secret is not None
        )
    )
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    return handler
