"""The commerce MCP server: ``orders.lookup``, ``customers.history`` and
``orders.customer_history`` (default port 8710).

Orders and customers are commerce's; what was refunded is the payments ledger's, read through
:class:`~accord.tools.ledger_view.LedgerView` on every call (one record of money).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from accord.contracts.tools import tool_contract
from accord.protocol.mcp.server import CallContext, ToolServer, tool
from accord.protocol.settings import ServeOptions
from accord.tools._serving import database_for, make_service, package_version
from accord.tools.approval_rule import HISTORY_DAYS
from accord.tools.commerce_store import SCHEMA, CommerceStore, order_view
from accord.tools.ledger_view import LedgerView
from accord.tools.tenancy import TenantCustomer, verified_tenant

NAME = "commerce"


class _Resources:
    """Commerce depends on its database and on payments (the ledger it reads refunds from)."""

    def __init__(self, store: CommerceStore, ledger: LedgerView) -> None:
        self.store, self.ledger = store, ledger

    async def start(self) -> None:
        await self.store.start()
        await self.ledger.start()  # connects in the background: payments may start later

    async def stop(self) -> None:
        try:
            await self.ledger.stop()
        finally:
            await self.store.stop()

    async def ready(self) -> bool:
        return await self.store.ready() and await self.ledger.ready()


def build_server(options: ServeOptions) -> ToolServer:
    store = CommerceStore(database_for(NAME, options))
    ledger = LedgerView(in_process=options.in_process)  # the in-process Runner's payments

    # The customer and app are the verified ones (the caller's own, or its delegation's),
    # never just the argument: the server refused a call whose argument names anyone else, or
    # whose app it does not serve (contract access).
    async def orders_lookup(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        who = verified_tenant(args, ctx)
        rows = await store.lookup_order(args["order_id"], who)  # NOT_FOUND before payments
        paid_back = await ledger.refunds(ctx, who, order_id=args["order_id"])
        return order_view(rows, paid_back, datetime.now(UTC))

    async def history(
        ctx: CallContext, who: TenantCustomer, of_order: str | None = None
    ) -> dict[str, Any]:
        found = await store.customer_history(who, of_order=of_order)
        recent = await ledger.refunds(ctx, who, since_days=HISTORY_DAYS)
        return {
            **found,
            "refunds_90d": recent["count"],
            "refunded_cents_90d": recent["total_cents"],
        }

    async def customers_history(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await history(ctx, verified_tenant(args, ctx))

    # risk-check's one call: the history, given only for the customer's own order (the proof
    # orders.lookup gave it before, without a second request and a second ledger read).
    async def orders_customer_history(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        order_id = args["order_id"]
        found = await history(ctx, verified_tenant(args, ctx), order_id)
        return {"order_id": order_id, **found}

    return ToolServer(
        "accord-commerce",
        package_version(),
        [
            tool(tool_contract("orders.lookup"), orders_lookup),
            tool(tool_contract("customers.history"), customers_history),
            tool(tool_contract("orders.customer_history"), orders_customer_history),
        ],
        resources=_Resources(store, ledger),
        instructions="Orders and customer history of the Accord demo shop. Money is in cents.",
    )


service = make_service(
    NAME,
    "MCP tools: orders.lookup, customers.history, orders.customer_history",
    build_server,
    SCHEMA,
    port=8710,  # the refund assistant's documented port (docs/refund-assistant.md)
)
