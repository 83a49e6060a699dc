"""A small MCP tool server on the mcp 2.3.0 low-level server, broken on purpose per mode.

Run: ``python -m tests.kit.broken_tools MODE PORT``. It serves ``orders.lookup`` and
``refunds.issue`` from the shipped contracts with an in-memory ledger, and imports nothing of
Accord but the contract package.

    correct          follows the contract (the control)
    not-idempotent   refunds.issue makes a new receipt for a key it has seen     (TOOL-006)
    annotations      readOnlyHint on the write tool, another input schema (TOOL-004, TOOL-005)
    structured-error errors in structuredContent, no _meta code                  (ERR-005)
    open             no credential needed, anyone may write, the customer argument is
                     trusted                                         (TOOL-010, 011, 012)

Every mode but ``open`` needs ``Authorization: Bearer <token>`` (401 naming its resource
metadata otherwise). The control knows two opaque tokens, like a real server's verifier would
map them: ``tenant-a`` a service granted both tools, acting for the customer its delegation
(``_meta``) names; ``tenant-b`` a principal that may read but not write.
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
from accord.contracts.keys import MCP_ERROR_META_KEY, PROTECTED_RESOURCE_PATH
from accord.contracts.tool_access import parse_tool_delegation
from accord.contracts.tools import tool_contract

MODES = ("correct", "not-idempotent", "annotations", "structured-error", "open")
WRITERS = {"tenant-a"}
READERS = {"tenant-a", "tenant-b"}
# The demo order the kit looks up, and the kit's own order it refunds (accord.kit.probes).
KNOWN = {("O-1001", "C-01"), ("O-9001", "C-90")}
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

    def call(
        self, name: str, args: dict[str, Any], token: str | None, meta: dict[str, Any]
    ) -> types.CallToolResult:
        contract = CONTRACTS[name]
        if self.mode != "open" and token not in (WRITERS if contract.is_write else READERS):
            return self.error(AccordError(ErrorCode.PERMISSION_DENIED, "not allowed"))
        bad = next(iter(contract.input_validator().iter_errors(args)), None)
        if bad is not None:
            return self.error(AccordError(ErrorCode.INVALID_INPUT, "input breaks the schema"))
        if self.mode != "open":
            try:
                delegation = parse_tool_delegation(meta)
            except AccordError as refused:
                return self.error(refused)
            if delegation is None or delegation.tenant.user != args.get("customer_id"):
                return self.error(AccordError(ErrorCode.PERMISSION_DENIED, "not that customer"))
        if (args["order_id"], args["customer_id"]) not in KNOWN:
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
            "order_id": args["order_id"],
            "customer_id": args["customer_id"],
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

    async def on_call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        request = getattr(ctx, "request", None)
        header = request.headers.get("authorization", "") if request is not None else ""
        token = header.removeprefix("Bearer ").strip() or None
        return tools.call(params.name, dict(params.arguments or {}), token, dict(ctx.meta or {}))

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

    async def metadata(request: Request) -> JSONResponse:
        base = f"{request.url.scheme}://{request.url.netloc}"
        return JSONResponse({"resource": base + "/mcp", "authorization_servers": [base]})

    app = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route(PROTECTED_RESOURCE_PATH + "/mcp", metadata),
            Mount("/", app=mcp_app),
        ],
        lifespan=lifespan,
    )
    return app if mode == "open" else gate(app)


def gate(app: Any) -> Any:
    """401 naming the resource metadata for /mcp requests without a known bearer token."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers", ())) if scope["type"] == "http" else {}
        token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ").strip()
        if scope["type"] != "http" or scope["path"] != "/mcp" or token in READERS:
            await app(scope, receive, send)
            return
        host = headers.get(b"host", b"127.0.0.1").decode()
        where = f"http://{host}{PROTECTED_RESOURCE_PATH}/mcp"
        challenge = f'Bearer resource_metadata="{where}"'.encode()
        _status, body = AccordError(ErrorCode.UNAUTHENTICATED, "no credential").to_http()
        payload = json.dumps(body).encode()
        start = {"type": "http.response.start", "status": 401}
        start["headers"] = [
            (b"content-type", b"application/json"),
            (b"www-authenticate", challenge),
        ]
        await send(start)
        await send({"type": "http.response.body", "body": payload})

    return guarded


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    assert mode in MODES, mode
    uvicorn.run(build_app(mode), host="127.0.0.1", port=port, log_level="warning")
