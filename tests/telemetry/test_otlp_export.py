"""OTLP over HTTP when configured: a real `accord serve commerce` exports its spans and metrics
to an OTLP/HTTP endpoint (a stand-in collector here that decodes what it receives)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from accord.contracts.tools import shipped_tool_contracts
from accord.protocol.a2a.client import new_traceparent
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import ServerSpec
from accord.protocol.mcp.credentials import StaticCredential
from tests.protocol.a2a_client.support import service_env
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import acting_for
from tests.support.tool_servers import run_commerce

pytestmark = pytest.mark.timeout(120)


class Collector:
    """Keeps the span names and metric names of every OTLP/HTTP export it receives."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, str, str]] = []  # (service.name, span name, trace id)
        self.metrics: set[str] = set()
        self.content_types: set[str] = set()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                collector.content_types.add(self.headers.get("Content-Type", ""))
                if self.path == "/v1/traces":
                    collector._traces(body)
                elif self.path == "/v1/metrics":
                    collector._metrics(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            service = next(
                a.value.string_value for a in rs.resource.attributes if a.key == "service.name"
            )
            for ss in rs.scope_spans:
                for span in ss.spans:
                    self.spans.append((service, span.name, span.trace_id.hex()))

    def _metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest.FromString(body)
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                self.metrics.update(m.name for m in sm.metrics)


@pytest.fixture
def collector() -> Iterator[Collector]:
    found = Collector()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    yield found
    found.server.shutdown()
    found.server.server_close()


async def test_spans_and_metrics_reach_an_otlp_endpoint(
    collector: Collector, tmp_path: Path
) -> None:
    env = {
        **service_env(tmp_path / "data"),
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
    }
    (tmp_path / "logs").mkdir()
    with run_commerce(env, tmp_path / "logs") as (commerce, _payments):
        traceparent = new_traceparent()
        spec = ServerSpec(
            name="commerce",
            transport="http",
            url=f"{commerce.url}/mcp",
            contracts=(shipped_tool_contracts()["orders.lookup"],),
        )
        granted = sign_as(TEST_SERVICE, scopes=["orders.lookup"])
        credential = StaticCredential(token=granted)
        async with ToolClient.for_servers([spec], credential=credential) as tools:
            await tools.call(
                "orders.lookup",
                {"order_id": "O-1001", "customer_id": "C-01"},
                traceparent=traceparent,
                acting_for=acting_for("C-01"),
            )
        wanted = ("commerce", "execute_tool orders.lookup", traceparent.split("-")[1])
        end = time.monotonic() + 30
        while time.monotonic() < end:
            if wanted in collector.spans and "accord.tool.calls" in collector.metrics:
                break
            await asyncio.sleep(0.05)  # exporters post every 100-200 ms; bounded above
    assert wanted in collector.spans
    assert {"accord.tool.calls", "accord.server.requests"} <= collector.metrics
    assert collector.content_types == {"application/x-protobuf"}
