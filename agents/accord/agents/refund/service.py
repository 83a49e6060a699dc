"""`accord serve orchestrator`: the refund assistant on port 8700.

Besides the A2A routes every agent has, it serves ``GET /approvals`` (approver role, the
approver's app only) and ``GET /stats``, and lets the web console's origin call it from a
browser (``ACCORD_CONSOLE_URL``, CORS). Its workflows live in a durable event log:
``orchestrator-workflows.db`` in the data directory, or the PostgreSQL database given by
``--database-url`` / ``ACCORD_DATABASE_URL``. The log is the only record of its tasks: the A2A
task store is a view of it (task_views.py), so there is nothing to reconcile at start-up. The
runtime resumes the workflows a dead process left running (leases decide who, with several
replicas). The orchestrator itself (its runtime, every graph, the nodes' deps) is assembled
by assembly.py, as the embedded Runner's is; this module adds what only a served agent has.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from accord.agents.models import build_router
from accord.agents.refund import pause_points
from accord.agents.refund.approvals import APPROVALS_PATH, approval_queue
from accord.agents.refund.assembly import assemble
from accord.agents.refund.config import SERVICE_NAME, TOOLS_FILE, RefundSettings
from accord.agents.refund.executor import OrchestratorExecutor
from accord.agents.refund.peers import Peers
from accord.agents.refund.stats_route import STATS_PATH, stats_handler
from accord.agents.refund.task_views import WorkflowTaskSource
from accord.contracts.agents import agent_contract
from accord.protocol.a2a.server import (
    build_agent_app,
    push_store_ref,
    send_keys_ref,
    task_store_url,
)
from accord.protocol.a2a.server.derived_store import DerivedTaskStore
from accord.protocol.a2a.server.principal_routes import principal_route
from accord.protocol.auth import Principal
from accord.protocol.mcp.client import ToolClient
from accord.protocol.private_files import private_file
from accord.protocol.service import ServiceSpec
from accord.protocol.settings import ServeOptions, current, data_dir, service_url
from accord.protocol.storage.schema import StoreRef
from accord.runtime.workflow import LogEvent, Runtime
from accord.runtime.workflow.tables import SCHEMA as WORKFLOW_SCHEMA

CONTRACT_NAME: Final = "orchestrator"
OWNER_FILE: Final = "orchestrator-owner"


def _settings(options: ServeOptions) -> RefundSettings:
    """The workflow log goes to the service's PostgreSQL database when it has one."""
    url = task_store_url(options, SERVICE_NAME)
    shared_db = url if not url.startswith("sqlite") else None
    return RefundSettings.served(shared_db, service_url("policy"), service_url("risk"))


def stores(options: ServeOptions) -> list[StoreRef]:
    """What `accord db` upgrades: the workflow log, the orchestrator's only task store (its
    A2A tasks are views of it), the push notification tables and the sent-message keys."""
    return [
        StoreRef(WORKFLOW_SCHEMA, _settings(options).workflow_log_url),
        push_store_ref(options, SERVICE_NAME),
        send_keys_ref(options, SERVICE_NAME),
    ]


def build_app(options: ServeOptions) -> Any:
    settings = _settings(options)
    # The process's one tool client: connected in the background from the lifespan's start, so
    # the orchestrator comes up (and recovers its workflows) while a tool server is still down.
    # Its own token, its tools granted.
    tools = ToolClient.from_config(default=TOOLS_FILE, service=SERVICE_NAME)
    peers = Peers({"policy": settings.policy_url, "risk": settings.risk_url})
    orchestrator = assemble(
        settings,
        tools=tools,
        peers=peers,
        router=build_router(),
        retention_s=current().task_retention_s,
    )
    runtime, deps = orchestrator.runtime, orchestrator.deps
    # Crash tests' pause points wrap the tool path; empty unless ACCORD_DEV=1: nothing wrapped.
    pause_points.install(current().test_pause, deps)
    contract = agent_contract(CONTRACT_NAME)
    tasks = DerivedTaskStore(WorkflowTaskSource(runtime, contract.version))
    executor = OrchestratorExecutor(contract, runtime, created=tasks.created)

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        await _open(runtime, settings.workflow_log_url)
        try:
            yield
        finally:
            await runtime.close()
            await peers.aclose()

    async def approvals(principal: Principal) -> dict[str, Any]:
        return {"approvals": await approval_queue(runtime, principal)}

    app = build_agent_app(
        contract,
        executor,
        options,
        service_name=SERVICE_NAME,
        # The tool client first: it is started before recovery (resumed workflows call tools)
        # and closed after the runtime.
        lifespan_hooks=[tools.running, running],
        task_store=tasks,
        # The web console calls the public API from the browser (docs/console.md).
        browser_origins=[current().console_url],
        # A task changes when its workflow does (an approval resumes it from another request):
        # the log's events drive push notifications, not the request handler's.
        push_from_handler=False,
    )
    push = app.state.push

    async def workflow_changed(event: LogEvent) -> None:
        push.task_changed(event.workflow_id)

    runtime.subscribe(workflow_changed)
    app.router.routes.append(principal_route(APPROVALS_PATH, approvals))
    app.router.routes.append(principal_route(STATS_PATH, stats_handler(deps.router.metrics)))
    return app


async def _open(runtime: Runtime, log_url: str) -> None:
    """Open the runtime. An embedded SQLite log has one process by design: the previous one
    (its owner id is kept in the data directory) is declared dead at once, so its running
    workflows resume now instead of when its lease runs out. A shared PostgreSQL log has
    replicas: there, only an expired lease frees a workflow."""
    if not log_url.startswith("sqlite"):
        await runtime.open()
        return
    path = data_dir() / OWNER_FILE
    previous = path.read_text().strip() if path.exists() else ""
    await runtime.log.open()
    if previous and previous != runtime.owner:
        await runtime.log.drop_owner(previous)
    private_file(path).write_text(runtime.owner)  # 0600, like everything in the data dir
    await runtime.open()


service = ServiceSpec(
    name=SERVICE_NAME,
    protocol="a2a",
    port=8700,  # the refund assistant's documented port (docs/refund-assistant.md)
    description="refund assistant: intake, durable workflow, approvals",
    build_app=build_app,
    stores=stores,
)
