"""Commerce's view of refunds, read from the payments ledger (``refunds.list``) on every call.

The ledger is the one record of money paid back. Commerce keeps no copy: a copy would have to
be written after every refund (by a workflow step or an outbox consumer) and could disagree
with the ledger between the payment and that write, or forever after a crash or a refund issued
outside the workflow. Reading the ledger at the moment of the lookup makes disagreement
impossible rather than unlikely: ``refunds.issue`` commits before it answers, so any lookup that
starts after a receipt exists sees it (docs/refund-assistant.md, "One record of money").

Commerce calls payments as its own service (``svc:commerce``, granted ``refunds.list`` only),
acting for the customer the incoming call was verified for, so payments applies the same
allow-list and tenant rule as to any other caller. When payments cannot answer, the lookup
fails with its error (UNAVAILABLE, retried by callers) instead of reporting stale money.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from accord.contracts.envelope import Tenant
from accord.contracts.tool_access import ToolDelegation
from accord.protocol.in_process import InProcessServers
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import load_config
from accord.protocol.mcp.server import CallContext
from accord.tools.tenancy import TenantCustomer

LIST_TOOL: Final = "refunds.list"
# Payments' refunds.list, the one server it needs (ACCORD_TOOLS_CONFIG replaces it).
LEDGER_TOOLS: Final = Path(__file__).resolve().parent / "ledger_tools.yaml"
SERVICE: Final = "commerce"
# The session named in commerce's delegation when its own caller sent none (an end user).
_SESSION: Final = "commerce-lookup"


class LedgerView:
    """The refunds of one customer as payments holds them; started and stopped with commerce."""

    def __init__(
        self, tools: ToolClient | None = None, *, in_process: InProcessServers | None = None
    ) -> None:
        self._tools = tools or ToolClient.from_config(
            config=load_config(default=LEDGER_TOOLS).serving(LIST_TOOL),
            service=SERVICE,
            grants=[LIST_TOOL],
            in_process=in_process,
        )

    async def start(self) -> None:
        await self._tools.start()

    async def stop(self) -> None:
        await self._tools.aclose()

    async def ready(self) -> bool:
        return await self._tools.ready(LIST_TOOL)

    async def refunds(
        self,
        ctx: CallContext,
        who: TenantCustomer,
        *,
        order_id: str | None = None,
        since_days: int | None = None,
    ) -> dict[str, Any]:
        """``refunds.list`` for ``who`` (already verified by commerce's own gate)."""
        args: dict[str, Any] = {"customer_id": who.customer_id}
        if order_id is not None:
            args["order_id"] = order_id
        if since_days is not None:
            args["since_days"] = since_days
        return await self._tools.call(
            LIST_TOOL, args, traceparent=ctx.traceparent, acting_for=_delegation(ctx, who)
        )


def _delegation(ctx: CallContext, who: TenantCustomer) -> ToolDelegation:
    """Commerce acts for exactly the tenant its caller was verified for: the caller's own
    tenant when a service delegated to commerce, else the end user's (or stdio parent's), in
    the app commerce verified (so payments answers for that app's customer only)."""
    if ctx.tenant is not None and (ctx.tenant.app, ctx.tenant.user) == (who.app, who.customer_id):
        return ToolDelegation(tenant=ctx.tenant)
    return ToolDelegation(tenant=Tenant(app=who.app, user=who.customer_id, session=_SESSION))
