"""Per-process OpenTelemetry set-up from the standard environment.

Nothing configured (the embedded default) installs no SDK at all: the OpenTelemetry API's
no-op tracer passes the incoming context through unchanged, so a W3C traceparent still crosses
every hop and log lines still carry the trace id, for the price of a context lookup.

Configured, it installs an SDK tracer provider and meter provider with ``service.name`` set:

    OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT   OTLP over HTTP
    OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER   otlp | console | none (comma list)
    OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_METRIC_EXPORT_INTERVAL
    OTEL_SDK_DISABLED=true                          nothing, whatever else is set
    ACCORD_TRACE_FILE / ACCORD_METRICS_FILE        JSON lines (accord.protocol.telemetry.files);
                                                   ``{service}`` in the path: the service name
    ACCORD_OTEL_LIBRARY_SPANS=true                 keep the a2a-sdk and MCP SDK's own spans

The a2a-sdk and the MCP SDK record spans of their own when OpenTelemetry is installed (a2a-sdk
one SERVER span per event-queue method; MCP a "MCP send" client span and a server span per
message). Ours carry the GenAI names and the contract's error codes, so theirs are off by
default: their tracers are the API's no-op tracer, which passes the parent context through
(their ``_meta`` injection keeps working, and our spans keep their parents).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.util.types import Attributes

from accord.protocol.settings import AccordSettings, current
from accord.protocol.telemetry.files import metrics_file_exporter, span_file_exporter

logger = logging.getLogger(__name__)

LIBRARY_SCOPES: Final = frozenset({"a2a-python-sdk", "mcp-python-sdk"})
"""Instrumentation scopes of the SDKs' own spans (a2a.utils.telemetry, mcp.shared._otel)."""

_ENDPOINTS: Final = {
    "traces": ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
    "metrics": ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
}


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _exporters(env: Mapping[str, str], signal: str) -> frozenset[str]:
    """``OTEL_{SIGNAL}_EXPORTER`` as a set; unset means otlp when an endpoint is configured."""
    raw = env.get(f"OTEL_{signal.upper()}_EXPORTER")
    if raw is not None:
        names = {n.strip().lower() for n in raw.split(",") if n.strip()}
        return frozenset(names - {"none"})
    return frozenset({"otlp"}) if any(env.get(k) for k in _ENDPOINTS[signal]) else frozenset()


def _per_service(path: str | None, service_name: str) -> str | None:
    """``{service}`` in a file path becomes the service's name: one setting for a whole mesh."""
    return path.replace("{service}", service_name) if path else None


@dataclass(frozen=True)
class TelemetrySettings:
    """What the environment asks for; :meth:`from_env` is the only reader.

    The ``OTEL_*`` variables are OpenTelemetry's own (read from ``env``); ours come from
    :class:`~accord.protocol.settings.AccordSettings` (``ACCORD_TRACE_FILE`` and so on)."""

    service_name: str
    traces: frozenset[str] = frozenset()
    metrics: frozenset[str] = frozenset()
    trace_file: str | None = None
    metrics_file: str | None = None
    library_spans: bool = False
    resource_attributes: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(
        cls,
        service_name: str,
        env: Mapping[str, str] | None = None,
        accord: AccordSettings | None = None,
    ) -> TelemetrySettings:
        env = os.environ if env is None else env  # OTEL_* only: OpenTelemetry's standard names
        accord = current() if accord is None else accord
        if _truthy(env.get("OTEL_SDK_DISABLED")):
            return cls(service_name=env.get("OTEL_SERVICE_NAME") or service_name)
        return cls(
            service_name=env.get("OTEL_SERVICE_NAME") or service_name,
            traces=_exporters(env, "traces"),
            metrics=_exporters(env, "metrics"),
            trace_file=_per_service(accord.trace_file, service_name),
            metrics_file=_per_service(accord.metrics_file, service_name),
            library_spans=accord.otel_library_spans,
        )

    @property
    def tracing(self) -> bool:
        return bool(self.traces or self.trace_file)

    @property
    def metering(self) -> bool:
        return bool(self.metrics or self.metrics_file)


class AccordTracerProvider(TracerProvider):
    """The SDK provider, with the protocol SDKs' own tracers replaced by pass-through ones."""

    def __init__(self, *, library_spans: bool, resource: Resource) -> None:
        super().__init__(resource=resource)
        self._library_spans = library_spans

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes = None,
    ) -> trace.Tracer:
        if not self._library_spans and instrumenting_module_name in LIBRARY_SCOPES:
            # The no-op tracer returns the parent span itself: context flows, nothing records.
            return trace.NoOpTracer()
        return super().get_tracer(
            instrumenting_module_name, instrumenting_library_version, schema_url, attributes
        )


def _span_exporter(name: str) -> SpanExporter | None:
    if name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if name == "console":
        return ConsoleSpanExporter(out=sys.stderr)  # stdout is the MCP stdio channel
    logger.warning("unsupported OTEL_TRACES_EXPORTER %r ignored (otlp, console, none)", name)
    return None


def _metric_exporter(name: str) -> MetricExporter | None:
    if name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter()
    if name == "console":
        return ConsoleMetricExporter(out=sys.stderr)
    logger.warning("unsupported OTEL_METRICS_EXPORTER %r ignored (otlp, console, none)", name)
    return None


def build_tracer_provider(settings: TelemetrySettings) -> AccordTracerProvider:
    provider = AccordTracerProvider(
        library_spans=settings.library_spans,
        resource=Resource.create({"service.name": settings.service_name}),
    )
    for name in sorted(settings.traces):
        exporter = _span_exporter(name)
        if exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(exporter))
    if settings.trace_file:
        # Synchronous: a line is in the file when the span ends, so a test needs no flush.
        provider.add_span_processor(SimpleSpanProcessor(span_file_exporter(settings.trace_file)))
    return provider


def build_meter_provider(
    settings: TelemetrySettings, extra_readers: tuple[MetricReader, ...] = ()
) -> MeterProvider:
    readers: list[MetricReader] = list(extra_readers)
    for name in sorted(settings.metrics):
        exporter = _metric_exporter(name)
        if exporter is not None:
            readers.append(PeriodicExportingMetricReader(exporter))
    if settings.metrics_file:
        readers.append(PeriodicExportingMetricReader(metrics_file_exporter(settings.metrics_file)))
    return MeterProvider(
        metric_readers=readers, resource=Resource.create({"service.name": settings.service_name})
    )


@dataclass
class Telemetry:
    """What :func:`setup_telemetry` installed; ``shutdown`` flushes it (the SDK also does so at
    interpreter exit)."""

    settings: TelemetrySettings
    tracer_provider: AccordTracerProvider | None = None
    meter_provider: MeterProvider | None = None

    def shutdown(self) -> None:
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


_installed: Telemetry | None = None


def setup_telemetry(service_name: str) -> Telemetry:
    """Install tracing and metrics for this process, once (later calls return the first)."""
    global _installed
    if _installed is not None:
        return _installed
    settings = TelemetrySettings.from_env(service_name)
    installed = Telemetry(settings)
    if settings.tracing:
        installed.tracer_provider = build_tracer_provider(settings)
        trace.set_tracer_provider(installed.tracer_provider)
        # HTTP client spans (and a traceparent header) on every httpx request: A2A calls, card
        # fetches, model providers. The MCP SDK speaks httpx2, which this does not patch; MCP
        # calls carry their context in params._meta instead.
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

        HTTPXClientInstrumentor().instrument(tracer_provider=installed.tracer_provider)
    if settings.metering:
        installed.meter_provider = build_meter_provider(settings)
        metrics.set_meter_provider(installed.meter_provider)
    _installed = installed
    return installed
