"""`accord serve orchestrator`: the refund assistant on port 8700.

Besides the A2A routes every agent has, it serves ``GET /approvals`` (approver role) and keeps
its workflows in a durable event log: ``orchestrator-workflows.db`` in the data directory, or
the PostgreSQL database given by ``--database-url`` / ``ACCORD_DATABASE_URL``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.routing import Route

from accord.agents.models import build_router
from accord.agents.refund.approvals import APPROVALS_PATH, Approvals
from accord.agents.refund.config import SERVICE_NAME, RefundSettings
from accord.agents.refund.executor import OrchestratorExecutor
from accord.agents.refund.graph import build_graph
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.peers import Peers
from accord.agents.refund.projection import Projector
from accord.agents.refund.recovery import new_owner, reconcile, take_over
from accord.agents.refund.stats_route import stats_route
from accord.agents.workflow import Runtime
from accord.contracts.agents import agent_contract
from accord.protocol.a2a.server import RECOVERY_OPTION, build_agent_app, task_recovery
from accord.protocol.a2a.store import AccordTaskStore, table_name
from accord.protocol.mcp.client import ToolClient
from accord.protocol.service import ServiceSpec
from accord.protocol.settings import ServeOptions, data_dir, database_url, service_url

CONTRACT_NAME = "orchestrator"


def build_app(options: ServeOptions) -> Any:
    store_url = options.database_url or database_url(SERVICE_NAME)
    shared_db = store_url if not store_url.startswith("sqlite") else None
    settings = RefundSettings.from_env(shared_db, service_url("policy"), service_url("risk"))
    # The process's one tool client: connected in the background from the lifespan's start, so
    # the orchestrator comes up (and recovers its workflows) while a tool server is still down.
    tools = ToolClient.from_config()
    peers = Peers({"policy": settings.policy_url, "risk": settings.risk_url})
    deps = Deps(tools=tools, peers=peers, router=build_router(), settings=settings)
    runtime = Runtime(
        settings.workflow_log_url, owner=new_owner(), lease_ttl_s=settings.lease_ttl_s
    )
    deps.runtime = runtime
    runtime.register(build_graph(deps))
    store = AccordTaskStore(store_url, table=table_name(SERVICE_NAME))
    projector = Projector(store, runtime)
    approvals = Approvals(runtime, projector)
    contract = agent_contract(CONTRACT_NAME)
    executor = OrchestratorExecutor(contract, runtime, projector, approvals)
    # Read before it is forced off below: with several replicas it must stay off (replicas.md).
    fail_orphans = task_recovery(options)

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        await take_over(runtime, data_dir())
        unsubscribe = runtime.subscribe(projector.observe)
        try:
            await reconcile(store, runtime, projector, fail_orphans=fail_orphans)
            yield
        finally:
            unsubscribe()
            await runtime.close()
            await projector.drain()
            await peers.aclose()

    # The store's own start-up recovery would fail running tasks whose workflows resume.
    serve_options = ServeOptions(
        host=options.host,
        port=options.port,
        database_url=options.database_url,
        extra={**options.extra, RECOVERY_OPTION: "off"},
    )
    app = build_agent_app(
        contract,
        executor,
        serve_options,
        service_name=SERVICE_NAME,
        # The tool client first: it is started before recovery (resumed workflows call tools)
        # and closed after the runtime.
        lifespan_hooks=[tools.running, running],
        task_store=store,
    )
    app.router.routes.append(Route(APPROVALS_PATH, approvals.list_route, methods=["GET"]))
    app.router.routes.append(stats_route(deps.router.metrics))  # GET /stats (accord stats)
    return app


service = ServiceSpec(
    name=SERVICE_NAME,
    protocol="a2a",
    description="refund assistant: intake, durable workflow, approvals",
    build_app=build_app,
)
