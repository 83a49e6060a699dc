"""The commerce MCP server: ``orders.lookup`` and ``customers.history`` (default port 8710)."""

from __future__ import annotations

from typing import Any

from accord.contracts.tools import tool_contract
from accord.protocol.mcp.server import CallContext, ToolServer, tool
from accord.protocol.settings import ServeOptions
from accord.tools._serving import (
    database_for,
    make_service,
    package_version,
    verified_customer,
)
from accord.tools.commerce_store import SCHEMA, CommerceStore

NAME = "commerce"


def build_server(options: ServeOptions) -> ToolServer:
    store = CommerceStore(database_for(NAME, options))

    # The customer is the verified one (the caller's own, or its delegation's), never just the
    # argument: the server refused a call whose argument names anyone else (contract access).
    async def orders_lookup(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await store.lookup_order(args["order_id"], verified_customer(args, ctx))

    async def customers_history(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await store.customer_history(verified_customer(args, ctx))

    return ToolServer(
        "accord-commerce",
        package_version(),
        [
            tool(tool_contract("orders.lookup"), orders_lookup),
            tool(tool_contract("customers.history"), customers_history),
        ],
        resources=store,
        instructions="Orders and customer history of the Accord demo shop. Money is in cents.",
    )


service = make_service(NAME, "MCP tools: orders.lookup, customers.history", build_server, SCHEMA)
