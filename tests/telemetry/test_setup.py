"""Set-up from the environment, the JSON-lines file, the pass-through for library spans, and
propagation when nothing is installed (the embedded default)."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry import context
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.settings import AccordSettings
from accord.protocol.telemetry import spans
from accord.protocol.telemetry.files import read_spans
from accord.protocol.telemetry.setup import (
    LIBRARY_SCOPES,
    TelemetrySettings,
    build_meter_provider,
    build_tracer_provider,
)

TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_nothing_configured_installs_nothing() -> None:
    settings = TelemetrySettings.from_env("risk", {})
    assert settings.service_name == "risk"
    assert not settings.tracing
    assert not settings.metering


def test_an_otlp_endpoint_turns_on_otlp_for_both_signals() -> None:
    settings = TelemetrySettings.from_env(
        "risk", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    )
    assert settings.traces == {"otlp"}
    assert settings.metrics == {"otlp"}


def test_signal_specific_endpoint_and_explicit_exporters() -> None:
    settings = TelemetrySettings.from_env(
        "risk",
        {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_SERVICE_NAME": "risk-eu",
        },
    )
    assert settings.traces == {"otlp"}
    assert settings.metrics == frozenset()
    assert settings.service_name == "risk-eu"


def test_sdk_disabled_wins_over_everything() -> None:
    settings = TelemetrySettings.from_env(
        "risk",
        {
            "OTEL_SDK_DISABLED": "true",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
        },
        AccordSettings(trace_file="/tmp/x.jsonl"),
    )
    assert not settings.tracing
    assert not settings.metering


def test_otlp_provider_gets_a_batch_processor() -> None:
    provider = build_tracer_provider(TelemetrySettings("risk", traces=frozenset({"otlp"})))
    # The OpenTelemetry SDK lists a provider's processors nowhere public.
    processors = provider._active_span_processor._span_processors  # noqa: SLF001
    assert [type(p) for p in processors] == [BatchSpanProcessor]
    provider.shutdown()


def test_trace_file_holds_one_flat_line_per_span(tmp_path: Path) -> None:
    path = tmp_path / "spans" / "risk.jsonl"
    provider = build_tracer_provider(TelemetrySettings("risk", trace_file=str(path)))
    tracer = provider.get_tracer("accord")
    with (
        tracer.start_as_current_span("invoke_agent risk-check", kind=SpanKind.CLIENT) as outer,
        tracer.start_as_current_span("execute_tool customers.history") as inner,
    ):
        spans.mark_error(inner, AccordError(ErrorCode.NOT_FOUND, "no such customer"))
    provider.shutdown()
    inner_line, outer_line = read_spans(path)
    assert outer_line["name"] == "invoke_agent risk-check"
    assert outer_line["kind"] == "CLIENT"
    assert outer_line["service"] == "risk"
    assert outer_line["parent_id"] is None
    assert inner_line["parent_id"] == outer_line["span_id"]
    assert inner_line["trace_id"] == outer_line["trace_id"]
    assert inner_line["trace_id"] == f"{outer.get_span_context().trace_id:032x}"
    assert inner_line["attributes"]["error.type"] == ErrorCode.NOT_FOUND.value
    assert inner_line["status"] == "ERROR"


def test_library_spans_pass_the_parent_through(tmp_path: Path) -> None:
    """a2a-sdk and MCP SDK spans are not recorded, and what they wrap keeps our parent."""
    path = tmp_path / "t.jsonl"
    provider = build_tracer_provider(TelemetrySettings("policy", trace_file=str(path)))
    ours = provider.get_tracer("accord")
    for scope in LIBRARY_SCOPES:
        library = provider.get_tracer(scope)
        with (
            ours.start_as_current_span("A2A SendMessage") as server,
            library.start_as_current_span("a2a.server.events.EventQueue.enqueue_event"),
        ):
            assert spans.current_traceparent() == spans.traceparent_of()
            with ours.start_as_current_span("invoke_agent policy-check"):
                pass
        lines = read_spans(path)
        assert [line["name"] for line in lines[-2:]] == [
            "invoke_agent policy-check",
            "A2A SendMessage",
        ]
        assert lines[-2]["parent_id"] == f"{server.get_span_context().span_id:016x}"
    provider.shutdown()


def test_library_spans_can_be_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    provider = build_tracer_provider(
        TelemetrySettings("policy", trace_file=str(path), library_spans=True)
    )
    with provider.get_tracer("mcp-python-sdk").start_as_current_span("MCP send tools/call"):
        pass
    provider.shutdown()
    assert [line["name"] for line in read_spans(path)] == ["MCP send tools/call"]


def test_without_an_sdk_the_callers_traceparent_flows_through_our_spans() -> None:
    """The embedded default: no provider, yet a hop forwards the trace it was called in."""
    assert spans.current_traceparent() is None
    parent = spans.parent_context(TP)
    assert parent is not None
    with spans.span("execute_tool orders.lookup", kind=SpanKind.CLIENT, context=parent):
        assert spans.current_traceparent() == TP
    token = context.attach(parent)
    try:
        assert spans.parent_context("00-" + "1" * 32 + "-" + "2" * 16 + "-01") is None
        with spans.span("invoke_agent policy-check"):
            assert spans.current_traceparent() == TP  # the active context wins
    finally:
        context.detach(token)


@pytest.mark.parametrize("bad", ["", "garbage", "00-" + "0" * 32 + "-" + "0" * 16 + "-01"])
def test_malformed_traceparents_start_no_context(bad: str) -> None:
    assert spans.context_of(bad) is None


def test_error_type_is_the_contract_code_or_the_exception_class() -> None:
    assert spans.error_type(AccordError(ErrorCode.RATE_LIMITED)) == ErrorCode.RATE_LIMITED.value
    assert spans.error_type(ErrorCode.POLICY_DENIED) == ErrorCode.POLICY_DENIED.value
    assert spans.error_type(KeyError("secret user text")) == "KeyError"


def test_meter_provider_collects_our_instruments_into_a_reader() -> None:
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    provider = build_meter_provider(TelemetrySettings("payments"), (reader,))
    counter = provider.get_meter("accord").create_counter("accord.tool.calls")
    counter.add(
        1, {"gen_ai.tool.name": "refunds.issue", "error.type": ErrorCode.IDEMPOTENCY_CONFLICT.value}
    )
    data = reader.get_metrics_data()
    assert data is not None
    (resource_metrics,) = data.resource_metrics
    assert resource_metrics.resource.attributes["service.name"] == "payments"
    (metric,) = resource_metrics.scope_metrics[0].metrics
    (point,) = metric.data.data_points
    assert point.attributes == {
        "gen_ai.tool.name": "refunds.issue",
        "error.type": ErrorCode.IDEMPOTENCY_CONFLICT.value,
    }
    provider.shutdown()
