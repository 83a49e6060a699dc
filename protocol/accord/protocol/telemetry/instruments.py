"""The mesh's metrics, created once on the global meter (no-op until a provider is installed).

    accord.server.requests   counter    per A2A/MCP request: accord.protocol, accord.operation,
    accord.server.duration   histogram  (s)  http.response.status_code, error.type on failure
    accord.client.duration   histogram  (s) per outgoing call: gen_ai.operation.name,
                                            gen_ai.agent.name | gen_ai.tool.name, error.type
    accord.tasks             counter    A2A task status changes: gen_ai.agent.name, accord.status,
                                        error.type (failed tasks)
    accord.tool.calls        counter    tool calls served: gen_ai.tool.name, error.type (the code)
    accord.tool.duration     histogram  (s) the same calls' latency
    accord.workflow.nodes    counter    node attempts: accord.workflow.node, error.type
    accord.model.runs        counter    routed model runs: accord.model.route, accord.status,
                                        error.type
    accord.model.units       counter    budget units spent (failed calls cost too)
    accord.model.calls       counter    model calls made
    accord.model.cache.hits  counter    runs answered from the answer cache
    accord.model.duration    histogram  (s) run latency, cache lookups included

``error.type`` is absent on success, as in the OpenTelemetry conventions, so "calls by code" is
a group-by on ``error.type`` with the empty group being the successes.
"""

from __future__ import annotations

from typing import Final

from opentelemetry import metrics

_meter: Final = metrics.get_meter("accord")

server_requests: Final = _meter.create_counter(
    "accord.server.requests", unit="{request}", description="A2A and MCP requests served"
)
server_duration: Final = _meter.create_histogram(
    "accord.server.duration", unit="s", description="Time to serve an A2A or MCP request"
)
client_duration: Final = _meter.create_histogram(
    "accord.client.duration",
    unit="s",
    description="Outgoing agent and tool calls (invoke_agent, execute_tool), retries included",
)
tasks: Final = _meter.create_counter(
    "accord.tasks", unit="{task}", description="A2A task status changes, by contract status"
)
tool_calls: Final = _meter.create_counter(
    "accord.tool.calls", unit="{call}", description="Tool calls served, by error code"
)
tool_duration: Final = _meter.create_histogram(
    "accord.tool.duration", unit="s", description="Time to serve one tool call"
)
workflow_nodes: Final = _meter.create_counter(
    "accord.workflow.nodes", unit="{attempt}", description="Workflow node attempts"
)
model_runs: Final = _meter.create_counter(
    "accord.model.runs", unit="{run}", description="Routed model runs by route and status"
)
model_units: Final = _meter.create_counter(
    "accord.model.units", unit="{unit}", description="Budget units spent on model calls"
)
model_calls: Final = _meter.create_counter(
    "accord.model.calls", unit="{call}", description="Model calls made (fallbacks included)"
)
model_cache_hits: Final = _meter.create_counter(
    "accord.model.cache.hits", unit="{run}", description="Model runs answered from the cache"
)
model_duration: Final = _meter.create_histogram(
    "accord.model.duration", unit="s", description="Model run latency, cache lookup included"
)
