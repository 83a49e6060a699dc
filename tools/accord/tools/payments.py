"""The payments MCP server: ``refunds.issue``, ``refunds.get``, ``refunds.list`` (port 8711)."""

from __future__ import annotations

from typing import Any

from accord.contracts.tools import tool_contract
from accord.protocol.mcp.server import CallContext, ToolServer, tool
from accord.protocol.settings import ServeOptions
from accord.tools._serving import database_for, make_service, package_version
from accord.tools.ledger import SCHEMA, Ledger
from accord.tools.tenancy import verified_tenant

NAME = "payments"


def build_server(options: ServeOptions) -> ToolServer:
    ledger = Ledger(database_for(NAME, options))

    # App, customer and approver as the server verified them (contract access): the ledger
    # records the approver the caller's delegation names, never one an argument made up.
    async def refunds_issue(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await ledger.issue(
            verified_tenant(args, ctx), {**args, "approved_by": ctx.approved_by}
        )

    async def refunds_get(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await ledger.get(verified_tenant(args, ctx), args["idempotency_key"])

    async def refunds_list(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return await ledger.list_refunds(
            verified_tenant(args, ctx),
            args.get("order_id"),
            args.get("since_days"),
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
    NAME,
    "MCP tools: refunds.issue, refunds.get, refunds.list",
    build_server,
    SCHEMA,
    port=8711,  # the refund assistant's documented port (docs/refund-assistant.md)
)
