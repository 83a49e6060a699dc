"""A small MCP tool server on the mcp 2.3.0 low-level server, broken on purpose per mode.

Run: ``python -m tests.kit.broken_tools MODE PORT``. It serves ``orders.lookup`` and
``refunds.issue`` from the shipped contracts with an in-memory ledger, and imports nothing of
Accord but the contract package.

    correct          follows the contract (the control)
    not-idempotent   refunds.issue makes a new receipt for a key it has seen     (TOOL-006)
    annotations      readOnlyHint on the write tool, another input schema (TOOL-004, TOOL-005)
    structured-error errors in structuredContent, no _meta code                  (ERR-005)
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import MCP_ERROR_META_KEY
from accord.contracts.tools import tool_contract

MODES = ("correct", "not-idempotent", "annotations", "structured-error")
CONTRACTS = {n: tool_contract(n) for n in ("orders.lookup", "refunds.issue")}
ORDER = {
    "order_id": "O-1001",
    "customer_id": "C-01",
    "status": "delivered",
    "currency": "USD",
    "total_cents": 5999,
    "refunded_cents": 0,
    "refundable_cents": 5999,
    "ordered_at": "2026-01-01T10:00:00Z",
    "delivered_at": "2026-01-03T10:00:00Z",
    "days_since_delivery": 5,
    "final_sale": False,
    "items": [
        {
            "sku": "S-1",
            "name": "shirt",
            "quantity": 1,
            "unit_price_cents": 5999,
            "category": "apparel",
            "final_sale": False,
        }
    ],
}


def listing(mode: str) -> list[types.Tool]:
    tools = []
    for contract in CONTRACTS.values():
        annotations = contract.mcp_annotations()
        input_schema = dict(contract.input_schema)
        if mode == "annotations" and contract.is_write:
            annotations = {**annotations, "readOnlyHint": True, "destructiveHint": False}
        if mode == "annotations" and contract.name == "orders.lookup":
            input_schema = {**input_schema, "required": ["order_id"]}
        tools.append(
            types.Tool(
                name=contract.name,
                title=contract.title,
                description=contract.description,
                input_schema=input_schema,
                output_schema=contract.output_schema,
                annotations=types.ToolAnnotations.model_validate(annotations),
            )
        )
    return tools


class Tools:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.receipts: dict[str, dict[str, Any]] = {}

    def error(self, error: AccordError) -> types.CallToolResult:
        payload = error.to_dict()
        text: list[types.ContentBlock] = [
            types.TextContent(type="text", text=json.dumps({"error": payload}))
        ]
        if self.mode == "structured-error":
            return types.CallToolResult(
                is_error=True, content=text, structured_content={"error": payload}
            )
        return types.CallToolResult(
            is_error=True, content=text, _meta={MCP_ERROR_META_KEY: payload}
        )

    def ok(self, output: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(output))],
            structured_content=output,
        )

    def call(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        contract = CONTRACTS[name]
        bad = next(iter(contract.input_validator().iter_errors(args)), None)
        if bad is not None:
            return self.error(AccordError(ErrorCode.INVALID_INPUT, "input breaks the schema"))
        if (args["order_id"], args["customer_id"]) != ("O-1001", "C-01"):
            return self.error(AccordError(ErrorCode.NOT_FOUND, "no such order"))
        if name == "orders.lookup":
            return self.ok(ORDER)
        key = args["idempotency_key"]
        same = {k: args.get(k) for k in ("order_id", "amount_cents", "reason")}
        seen = self.receipts.get(key)
        if seen is not None and self.mode != "not-idempotent":
            if seen["args"] != same:
                return self.error(AccordError(ErrorCode.IDEMPOTENCY_CONFLICT))
            return self.ok({"receipt": seen["receipt"], "replayed": True})
        receipt = {
            "receipt_id": uuid.uuid4().hex,
            "idempotency_key": key,
            "order_id": "O-1001",
            "customer_id": "C-01",
            "amount_cents": args["amount_cents"],
            "currency": "USD",
            "reason": args["reason"],
            "approved_by": None,
            "created_at": "2026-01-09T10:00:00Z",
        }
        self.receipts[key] = {"args": same, "receipt": receipt}
        return self.ok({"receipt": receipt, "replayed": False})


def build_app(mode: str) -> Starlette:
    tools = Tools(mode)
    listed = types.ListToolsResult(tools=listing(mode))

    async def on_list(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return listed

    async def on_call(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return tools.call(params.name, dict(params.arguments or {}))

    server: Server[Any] = Server(
        "broken-tools", version="0.0.1", on_list_tools=on_list, on_call_tool=on_call
    )
    mcp_app = server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True
    )

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return Starlette(
        routes=[Route("/healthz", healthz), Mount("/", app=mcp_app)], lifespan=lifespan
    )


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    assert mode in MODES, mode
    uvicorn.run(build_app(mode), host="127.0.0.1", port=port, log_level="warning")
