"""The orchestrator, assembled in one place: its workflow runtime, every graph it runs, and the
nodes' dependencies.

Both ways of running the refund assistant build it here: the served A2A agent
(``service.build_app``, ``accord serve orchestrator``) and the embedded Runner
(``accord.agents.runner``). So both run the same graphs (every refund version in flight and the
approval workflow) with the same wiring: the nodes' tool client, peers and model router, and
the attention board that tells approvers of a refund stopped on a foreign receipt. A workflow's
budget is its input's (``WorkflowInput``: units, tool calls, deadline), spent through
``Deps.model`` and ``Deps.call_tool``; nothing here holds it.

What differs between the two is a parameter, never a second assembly:

==============  =====================================  ======================================
parameter       served (service.py)                    embedded (Runner)
==============  =====================================  ======================================
settings        log, peers: the serve options          log, peers, approval timeout: arguments
tools           the configured servers                 the Runner's, observed (events)
peers           ``Peers`` over A2A                     ``ObservedPeers`` (maybe in process)
router          ``build_router()``                     the Runner's models, observed metrics
owner           the runtime's own id                   ``runner-<uuid>``
clock           the system clock                       the Runner's (a test's)
retention_s     ``ACCORD_TASK_RETENTION_S``            none: sessions are kept
==============  =====================================  ======================================

Either way the ``ACCORD_*`` settings it uses are read from the process settings when used
(``RefundSettings``' properties), unless the Runner was given a value.

What only the served agent has stays in ``build_app``: the A2A app, its task store (a view of
this runtime's log), push notifications and the ``/approvals`` and ``/stats`` routes. Opening
and closing stay with the owner too (a service's lifespan, the Runner's ``open``/``close``).
"""

from __future__ import annotations

from dataclasses import dataclass

from accord.agents.models import Router
from accord.agents.refund.approvals import build_approval_graph
from accord.agents.refund.attention import attention_board
from accord.agents.refund.config import RefundSettings
from accord.agents.refund.graph import build_graphs
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.peers import Peers
from accord.protocol.mcp.client import ToolClient
from accord.runtime.workflow import Clock, Runtime


@dataclass(frozen=True)
class Orchestrator:
    """The assembled orchestrator: a runtime not yet opened, and the deps bound to its nodes."""

    runtime: Runtime
    deps: Deps


def assemble(
    settings: RefundSettings,
    *,
    tools: ToolClient,
    peers: Peers,
    router: Router,
    owner: str | None = None,
    clock: Clock | None = None,
    retention_s: float | None = None,
) -> Orchestrator:
    """Build the runtime on ``settings.workflow_log_url`` and register every graph on it."""
    deps = Deps(tools=tools, peers=peers, router=router, settings=settings)
    runtime = Runtime(
        settings.workflow_log_url,
        owner=owner,
        lease_ttl_s=settings.workflow_lease_ttl_s,
        clock=clock,
        retention_s=retention_s,
    )
    for graph in build_graphs(deps):  # every version still in flight, newest last
        runtime.register(graph)
    # An approver's decision is a workflow of its own, which resumes the refund (approvals.py).
    runtime.register(build_approval_graph(runtime))
    deps.attention = attention_board(runtime)  # a stopped refund is told to the approvers
    return Orchestrator(runtime=runtime, deps=deps)
