"""JSON-lines files of finished spans and metric snapshots, for tests and local debugging.

``ACCORD_TRACE_FILE=path`` writes one line per finished span; ``ACCORD_METRICS_FILE=path`` one
line per metric collection. The SDK's console exporters do the writing (they take any text
stream and a formatter); this module only says what a line holds, flat and easy to assert on:

    {"trace_id": "…32 hex…", "span_id": "…16 hex…", "parent_id": "…16 hex…" | null,
     "name": "execute_tool tickets.get", "kind": "SERVER", "service": "helpdesk",
     "attributes": {...}, "status": "OK" | "ERROR" | "UNSET", "start_ns": 0, "end_ns": 0,
     "events": [{"name": "retry", "attributes": {...}}]}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.trace import format_span_id, format_trace_id


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """One finished span as a flat JSON-able dict (the line format above)."""
    ctx = span.get_span_context()
    parent = span.parent
    resource = span.resource.attributes if span.resource is not None else {}
    return {
        "trace_id": format_trace_id(ctx.trace_id) if ctx is not None else None,
        "span_id": format_span_id(ctx.span_id) if ctx is not None else None,
        "parent_id": format_span_id(parent.span_id) if parent is not None else None,
        "parent_remote": bool(parent.is_remote) if parent is not None else None,
        "name": span.name,
        "kind": span.kind.name,
        "service": resource.get("service.name"),
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else None,
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "events": [{"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events],
    }


def _span_line(span: ReadableSpan) -> str:
    return json.dumps(span_record(span), ensure_ascii=False, default=str) + "\n"


def _metrics_line(data: MetricsData) -> str:
    return data.to_json(indent=None) + "\n"


def _open(path: str) -> IO[str]:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Line-buffered append: several processes may share a directory, and a test reads the
    # file while the service still runs.
    return target.open("a", encoding="utf-8", buffering=1)


def span_file_exporter(path: str) -> ConsoleSpanExporter:
    return ConsoleSpanExporter(out=_open(path), formatter=_span_line)


def metrics_file_exporter(path: str) -> ConsoleMetricExporter:
    return ConsoleMetricExporter(out=_open(path), formatter=_metrics_line)


def read_spans(path: Path) -> list[dict[str, Any]]:
    """Every span line of a trace file (a missing file has none)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
