"""The refund nodes' dependencies: what they call at run time (tools, peers, the model router),
built once per process by the orchestrator's assembly (assembly.py) and bound to every node.
A node calls a tool only through :meth:`Deps.call_tool`, never ``tools`` itself: the call is
paid from the request's budget first (tests/agents/runner/test_tool_calls_counted.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol

from accord.agents.models import Router
from accord.agents.refund.attention import Flag
from accord.agents.refund.budget import BudgetedModel, RequestBudget
from accord.agents.refund.config import RefundSettings
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.peers import Peers
from accord.agents.refund.reported_errors import reported_errors
from accord.contracts.envelope import Tenant
from accord.contracts.errors import AccordError
from accord.contracts.tool_access import ToolDelegation
from accord.protocol.mcp.client import ToolClient
from accord.protocol.sent import never_sent
from accord.runtime.models import CacheScope
from accord.runtime.workflow import NodeContext


class ToolPath(Protocol):
    """A tool call of a workflow node: :meth:`Deps.call_tool`'s signature."""

    def __call__(
        self, ctx: NodeContext, tool: str, arguments: dict[str, Any], **options: Any
    ) -> Awaitable[dict[str, Any]]: ...


@dataclass
class Deps:
    tools: ToolClient  # the process's one MCP client, started and closed by its owner
    peers: Peers
    router: Router
    settings: RefundSettings
    # Concurrent orders.lookup calls of one workflow share one call (the three checks start
    # together); an entry lives only while its call is in flight.
    lookups: dict[tuple[str, str], asyncio.Task[dict[str, Any]]] = field(default_factory=dict)
    # Tells the approvers of a refund stopped on a foreign receipt (attention.py), set by the
    # assembly (assembly.py); None: the WARNING log line only (a node test's deps).
    attention: Flag | None = None
    # The one seam of development aids on the tool path: the crash tests' pause points wrap it
    # when the process is built (pause_points.install, ACCORD_TEST_PAUSE with ACCORD_DEV=1).
    # Otherwise it is paid_call itself, and no node calls a development aid.
    tool_path: ToolPath = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.tool_path = self.paid_call

    @staticmethod
    def acting_for(inp: WorkflowInput, approved_by: str | None = None) -> ToolDelegation:
        """The delegation of this workflow's tool calls: the customer's tenant (from the
        verified principal of the request), and the approver of an approved refund (from the
        approver's verified principal, recorded by the approval); never from a model."""
        tenant = Tenant(app=inp.app, user=inp.customer_id, session=inp.session)
        return ToolDelegation(tenant=tenant, approved_by=approved_by)

    def model(self, inp: WorkflowInput, ctx: NodeContext) -> BudgetedModel:
        """The model bound to the request's one budget (budget.py) and the customer's cache
        scope. The deadline is not bound: a node may run long after the first message (an
        approval)."""
        budget = RequestBudget(inp, ctx)
        routed = self.router.bind(budget=budget, scope=CacheScope.tenant(inp.app, inp.customer_id))
        return BudgetedModel(routed, budget)

    async def call_tool(
        self, ctx: NodeContext, tool: str, arguments: dict[str, Any], **options: Any
    ) -> dict[str, Any]:
        """``tools.call`` for this workflow, paid first from the request's tool calls
        (BUDGET_EXHAUSTED, and no call, when none is left). An error of the call is the tool's
        (reported_errors.py: the customer is not shown its words)."""
        return await self.tool_path(ctx, tool, arguments, **options)

    async def paid_call(
        self, ctx: NodeContext, tool: str, arguments: dict[str, Any], **options: Any
    ) -> dict[str, Any]:
        """What :meth:`call_tool` does, unless a development aid wrapped it. A call with an
        idempotency key is a write: it is made only while the log still says the workflow
        runs (canceled through another replica, it is not made: docs/replicas.md)."""
        if "idempotency_key" in options:
            await ctx.ensure_open()
        budget = RequestBudget(WorkflowInput.model_validate(ctx.input), ctx)
        budget.charge_tool_call(tool)
        try:
            with reported_errors(tool):
                return await self.tools.call(tool, arguments, **options)
        except AccordError as error:
            if never_sent(error):
                budget.give_back_tool_call()
            raise
