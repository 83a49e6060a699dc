"""The refund nodes' dependencies: what they call at run time (tools, peers, the model router),
built once per process by the service (or the Runner) and bound to every node."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from accord.agents.models import CacheScope, RoutedModel, Router, UnitBudget
from accord.agents.refund.attention import Flag
from accord.agents.refund.config import RefundSettings
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.peers import Peers
from accord.contracts.envelope import Tenant
from accord.contracts.tool_access import ToolDelegation
from accord.protocol.mcp.client import ToolClient


@dataclass
class Deps:
    tools: ToolClient  # the process's one MCP client, started and closed by its owner
    peers: Peers
    router: Router
    settings: RefundSettings
    # Concurrent orders.lookup calls of one workflow share one call (the three checks start
    # together); an entry lives only while its call is in flight.
    lookups: dict[tuple[str, str], asyncio.Task[dict[str, Any]]] = field(default_factory=dict)
    # Tells the approvers of a refund stopped on a foreign receipt (attention.py); None: the
    # WARNING log line only (the in-process Runner has no approval queue).
    attention: Flag | None = None

    @staticmethod
    def acting_for(inp: WorkflowInput, approved_by: str | None = None) -> ToolDelegation:
        """The delegation of this workflow's tool calls: the customer's tenant (from the
        verified principal of the request), and the approver of an approved refund (from the
        approver's verified principal, recorded by the approval); never from a model."""
        tenant = Tenant(app=inp.app, user=inp.customer_id, session=inp.session)
        return ToolDelegation(tenant=tenant, approved_by=approved_by)

    def model(self, inp: WorkflowInput) -> RoutedModel:
        """The model bound to this workflow's budget and the customer's cache scope. The
        deadline is not bound: a node may run long after the first message (an approval)."""
        return self.router.bind(
            budget=UnitBudget(inp.units), scope=CacheScope.tenant(inp.app, inp.customer_id)
        )
