"""Trace context across real processes: A2A in HTTP headers, MCP in ``params._meta``.

commerce (MCP) and risk-check (A2A, which reads customer history from commerce over MCP) run
as `accord serve` processes, each exporting spans and metrics to its own file. The test process
installs no OpenTelemetry SDK: it is a plain caller with a traceparent of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.contracts.tools import shipped_tool_contracts
from accord.protocol.a2a.client import A2AClient, new_traceparent
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import ServerSpec
from accord.protocol.mcp.credentials import StaticCredential
from tests.protocol.a2a_client.support import envelope, service_env, service_token
from tests.support.processes import Service, run_service
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import acting_for
from tests.support.tool_servers import run_commerce
from tests.telemetry.traces import (
    Traces,
    ancestors,
    complete_tree,
    every,
    has,
    metric_points,
    one,
    span_id_of,
    trace_id_of,
    wait_metric,
)

pytestmark = pytest.mark.timeout(180)


class Pair:
    def __init__(self, root: Path, commerce: Service, risk: Service) -> None:
        self.root = root
        self.commerce = commerce
        self.risk = risk
        self.traces = Traces({n: root / "telemetry" / f"{n}.spans" for n in ("commerce", "risk")})

    def metrics(self, service: str) -> Path:
        return self.root / "telemetry" / f"{service}.metrics"


def _env(root: Path, service: str) -> dict[str, str]:
    return {
        "ACCORD_TRACE_FILE": str(root / "telemetry" / f"{service}.spans"),
        "ACCORD_METRICS_FILE": str(root / "telemetry" / f"{service}.metrics"),
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
    }


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    root = tmp_path_factory.mktemp("propagation")
    logs = root / "logs"
    logs.mkdir()
    env = service_env(root / "data")
    with run_commerce(env, logs, commerce_env=_env(root, "commerce")) as (commerce, _payments):
        risk_env = {**env, **_env(root, "risk"), "ACCORD_COMMERCE_URL": commerce.url}
        with run_service(
            "risk", ["serve", "risk"], env=risk_env, log_dir=logs, deadline_s=90
        ) as risk:
            yield Pair(root, commerce, risk)


async def test_one_trace_from_the_caller_through_a2a_and_mcp(pair: Pair) -> None:
    traceparent = new_traceparent()
    trace_id = trace_id_of(traceparent)
    async with await A2AClient.connect(pair.risk.url, token=service_token()) as agent:
        view = await agent.send(
            data={"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 5999},
            envelope=envelope("C-01"),
            traceparent=traceparent,
        )
    assert view.status is Status.COMPLETED

    found = pair.traces.wait(
        trace_id,
        every(
            has("risk:invoke_agent risk-check", "commerce:execute_tool orders.customer_history"),
            complete_tree(traceparent),
        ),
    )
    assert {s["service"] for s in found} == {"risk", "commerce"}
    # risk-check: the request's SERVER span hangs under the caller's span, from the header.
    (server,) = [s for s in found if s["service"] == "risk" and s["kind"] == "SERVER"]
    assert server["name"].startswith("A2A Send")
    assert server["parent_id"] == span_id_of(traceparent)
    assert server["parent_remote"] is True
    agent_span = one(found, "invoke_agent risk-check", "risk")
    assert agent_span["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert agent_span["attributes"]["gen_ai.agent.name"] == "risk-check"
    assert agent_span["attributes"]["accord.task.id"] == view.task_id
    assert server in ancestors(agent_span, found)
    # risk-check -> commerce over MCP: client span in risk, server span in commerce under it.
    for tool in ("orders.customer_history",):
        client = one(found, f"execute_tool {tool}", "risk")
        served = one(found, f"execute_tool {tool}", "commerce")
        assert client["kind"] == "CLIENT"
        assert served["kind"] == "SERVER"
        assert agent_span in ancestors(client, found)
        assert served["parent_id"] == client["span_id"]
        assert served["parent_remote"] is True
        assert served["attributes"]["gen_ai.tool.name"] == tool
        assert served["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert "error.type" not in served["attributes"]
        assert served["status"] != "ERROR"

    # Metrics of the same request: the task by status, the request by operation.
    tasks = wait_metric(
        pair.metrics("risk"),
        "accord.tasks",
        lambda points: any(
            p["attributes"].get("accord.status") == Status.COMPLETED.value for p in points
        ),
    )
    assert all(p["attributes"]["gen_ai.agent.name"] == "risk-check" for p in tasks)
    # The request's own point is recorded when its stream closes, after the task's: wait for it.
    wanted = {"GetAgentCard", server["name"].removeprefix("A2A ")}
    requests = wait_metric(
        pair.metrics("risk"),
        "accord.server.requests",
        lambda points: wanted <= {p["attributes"]["accord.operation"] for p in points},
    )
    assert wanted <= {p["attributes"]["accord.operation"] for p in requests}


async def test_mcp_meta_carries_the_callers_context_and_errors_carry_their_code(
    pair: Pair,
) -> None:
    traceparent = new_traceparent()
    trace_id = trace_id_of(traceparent)
    shipped = shipped_tool_contracts()
    contracts = (shipped["orders.lookup"], shipped["customers.history"])
    spec = ServerSpec(
        name="commerce", transport="http", url=f"{pair.commerce.url}/mcp", contracts=contracts
    )
    granted = sign_as(TEST_SERVICE, scopes=["orders.lookup"])
    credential = StaticCredential(token=granted)
    async with ToolClient.for_servers([spec], credential=credential) as tools:
        with pytest.raises(AccordError) as caught:
            await tools.call(
                "orders.lookup",
                {"order_id": "O-1001", "customer_id": "C-02"},  # someone else's order
                traceparent=traceparent,
                acting_for=acting_for("C-02"),
            )
    assert caught.value.code is ErrorCode.NOT_FOUND

    found = pair.traces.wait(trace_id, has("commerce:execute_tool orders.lookup"))
    served = one(found, "execute_tool orders.lookup", "commerce")
    assert served["parent_id"] == span_id_of(traceparent)
    assert served["attributes"]["error.type"] == ErrorCode.NOT_FOUND.value
    assert served["status"] == "ERROR"

    # The same call, counted by code in commerce's metrics, and the request it came in. The
    # request is counted when its response has been sent, after the tool call: an export may
    # hold the one and not yet the other, so both are waited for.
    end = time.monotonic() + 20
    while True:
        points = metric_points(pair.metrics("commerce"), "accord.tool.calls")
        codes = {p["attributes"].get("error.type") for p in points}
        requests = metric_points(pair.metrics("commerce"), "accord.server.requests")
        served = any(p["attributes"].get("accord.operation") == "tools/call" for p in requests)
        if (ErrorCode.NOT_FOUND.value in codes and served) or time.monotonic() > end:
            break
        await asyncio.sleep(0.1)  # the periodic reader writes every 200 ms
    assert ErrorCode.NOT_FOUND.value in codes
    assert served, requests
