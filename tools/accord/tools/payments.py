"""The payments MCP server: ``refunds.issue``, ``refunds.get``, ``refunds.list`` (port 8711)."""

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
from accord.tools.ledger import SCHEMA, Ledger

NAME = "payments"


def build_server(options: ServeOptions) -> ToolServer:
    ledger = Ledger(database_for(NAME, options))

    # Customer and approver as the server verified them (contract access): the ledger records
    # the approver the caller's delegation names, never one an argument made up.
    async def refunds_issue(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        verified = {**args, "customer_id": verified_customer(args, ctx)}
        verified["approved_by"] = ctx.approved_by
        return await ledger.issue(verified)

    async def refunds_get(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await ledger.get(verified_customer(args, ctx), args["idempotency_key"])

    async def refunds_list(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await ledger.list_refunds(
            verified_customer(args, ctx), args.get("order_id"), args.get("since_days")
        )

    return ToolServer(
        "accord-payments",
        package_version(),
        [
            tool(tool_contract("refunds.issue"), refunds_issue),
            tool(tool_contract("refunds.get"), refunds_get),
            tool(tool_contract("refunds.list"), refunds_list),
        ],
        resources=ledger,
        instructions="Refunds ledger of the Accord demo shop: exactly once per idempotency key.",
    )


service = make_service(
    NAME, "MCP tools: refunds.issue, refunds.get, refunds.list", build_server, SCHEMA
)
