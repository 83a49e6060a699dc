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
from accord.agents.refund.deps import Deps
from accord.agents.refund.executor import OrchestratorExecutor
from accord.agents.refund.graph import build_graph
from accord.agents.refund.peers import Peers
from accord.agents.refund.projection import Projector
from accord.agents.refund.recovery import new_owner, reconcile, take_over
from accord.agents.refund.stats_route import stats_route
from accord.agents.refund.tools_holder import Tools
from accord.agents.workflow import Runtime
from accord.agents.workflow.tables import SCHEMA as WORKFLOW_SCHEMA
from accord.contracts.agents import agent_contract
from accord.protocol.a2a.server import (
    RECOVERY_OPTION,
    build_agent_app,
    task_recovery,
    task_store_ref,
    task_store_url,
)
from accord.protocol.a2a.store import AccordTaskStore
from accord.protocol.a2a.store_tables import table_name
from accord.protocol.service import ServiceSpec
from accord.protocol.settings import ServeOptions, data_dir, service_url
from accord.protocol.storage.schema import StoreRef

CONTRACT_NAME = "orchestrator"


def _settings(options: ServeOptions) -> RefundSettings:
    store_url = task_store_url(options, SERVICE_NAME)
    shared_db = store_url if not store_url.startswith("sqlite") else None
    return RefundSettings.from_env(shared_db, service_url("policy"), service_url("risk"))


def stores(options: ServeOptions) -> list[StoreRef]:
    """The task table and the workflow log (`accord db`)."""
    return [
        task_store_ref(options, SERVICE_NAME),
        StoreRef(WORKFLOW_SCHEMA, _settings(options).workflow_log_url),
    ]


def build_app(options: ServeOptions) -> Any:
    store_url = task_store_url(options, SERVICE_NAME)
    settings = _settings(options)
    tools, peers = Tools(), Peers({"policy": settings.policy_url, "risk": settings.risk_url})
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
            await tools.aclose()
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
        lifespan_hooks=[running],
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
    stores=stores,
)
