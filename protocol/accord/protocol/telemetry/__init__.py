"""OpenTelemetry for the Accord mesh: set-up, spans, metrics, logs (docs/observability.md)."""

from accord.protocol.telemetry.logs import bind_task, configure_logging, current_task_id
from accord.protocol.telemetry.setup import Telemetry, TelemetrySettings, setup_telemetry
from accord.protocol.telemetry.spans import (
    current_traceparent,
    mark_current_error,
    mark_error,
    parent_context,
    span,
    traceparent_of,
)

__all__ = [
    "Telemetry",
    "TelemetrySettings",
    "bind_task",
    "configure_logging",
    "current_task_id",
    "current_traceparent",
    "mark_current_error",
    "mark_error",
    "parent_context",
    "setup_telemetry",
    "span",
    "traceparent_of",
]
