"""Small MCP tool servers with known faults, run as real processes by the client tests.

One process serves every scenario over Streamable HTTP at ``/<scenario>/mcp`` (one start-up
for the whole test module), or one scenario over stdio::

    python -m tests.protocol.mcp.servers --port 8123
    python -m tests.protocol.mcp.servers --stdio good

``GET /calls`` answers how often each (scenario, tool, key) was called, so tests can prove
how many attempts reached the server. Built on the SDK's low-level ``Server`` so that schemas
and annotations are advertised exactly as written here, not derived from Python signatures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import CONTRACT_VERSIONS_META_KEY, TRACEPARENT_KEY
from accord.contracts.tools import ToolContract, load_tool_contract, tool_contract
from tests.protocol.mcp.paths import ECHO_CONTRACT

SCENARIOS = (
    "good",
    "annotation",
    "missing",
    "bad_output",
    "input_schema",
    "flaky",
    "slow",
    "foreign",
    "major_ahead",
    "both_majors",
)
SLOW_SECONDS = 5.0

CALLS: Counter[str] = Counter()


def _contracts() -> dict[str, ToolContract]:
    names = ("orders.lookup", "refunds.issue", "refunds.get")
    found = {name: tool_contract(name) for name in names}
    echo = load_tool_contract(ECHO_CONTRACT)
    found[echo.name] = echo
    return found


def _tool(contract: ToolContract, **overrides: Any) -> types.Tool:
    annotations = {**contract.mcp_annotations(), **overrides.pop("annotations", {})}
    return types.Tool.model_validate(
        {
            "name": contract.name,
            "title": contract.title,
            "description": contract.description,
            "inputSchema": overrides.pop("input_schema", contract.input_schema),
            "outputSchema": contract.output_schema,
            "annotations": annotations,
            "_meta": overrides.pop("meta", {CONTRACT_VERSIONS_META_KEY: contract.served_versions}),
        }
    )


def _order(order_id: str, customer_id: str) -> dict[str, Any]:
    return {
        "order_id": order_id,
        "customer_id": customer_id,
        "status": "delivered",
        "currency": "EUR",
        "total_cents": 4999,
        "refunded_cents": 0,
        "refundable_cents": 4999,
        "ordered_at": "2025-01-02T10:00:00Z",
        "delivered_at": "2025-01-05T10:00:00Z",
        "days_since_delivery": 3,
        "final_sale": False,
        "items": [
            {
                "sku": "SKU-1",
                "name": "Kettle",
                "quantity": 1,
                "unit_price_cents": 4999,
                "category": "kitchen",
                "final_sale": False,
            }
        ],
    }


def _ok(data: dict[str, Any]) -> types.CallToolResult:
    import json

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data))], structured_content=data
    )


def _error(
    code: ErrorCode, message: str, details: dict[str, Any] | None = None
) -> types.CallToolResult:
    return types.CallToolResult.model_validate(AccordError(code, message, details).to_mcp_result())


def build_server(scenario: str, *, stdio: bool = False) -> Server[Any]:
    contracts = _contracts()
    refunds: dict[str, dict[str, Any]] = {}

    tools = [_tool(c) for c in contracts.values()]
    tools.append(
        types.Tool(name="misc.ping", input_schema={"type": "object"}, description="not contracted")
    )
    if scenario == "annotation":
        tools[0] = _tool(contracts["orders.lookup"], annotations={"readOnlyHint": False})
    elif scenario == "missing":
        tools = [t for t in tools if t.name != "refunds.issue"]
    elif scenario == "foreign":  # a third-party server: none of the shipped tools
        tools = [t for t in tools if t.name in ("debug.echo", "misc.ping")]
    elif scenario in ("major_ahead", "both_majors"):  # the same schemas, other versions stated
        lookup = contracts["orders.lookup"]
        stated = ["2.0.0"] if scenario == "major_ahead" else ["2.0.0", lookup.version]
        tools[0] = _tool(lookup, meta={CONTRACT_VERSIONS_META_KEY: stated})
    elif scenario == "input_schema":
        schema = {**contracts["orders.lookup"].input_schema, "additionalProperties": True}
        tools[0] = _tool(contracts["orders.lookup"], input_schema=schema)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args: Mapping[str, Any] = params.arguments or {}
        key = str(args.get("order_id") or args.get("idempotency_key") or args.get("text") or "")
        CALLS[f"{scenario}|{params.name}|{key}"] += 1
        meta = ctx.meta or {}
        if params.name == "debug.echo":
            if stdio and args["text"] == "exit":
                os._exit(3)  # a stdio server that dies mid-call, to test reconnection
            return _ok({"text": args["text"], "traceparent": meta.get(TRACEPARENT_KEY)})
        if params.name == "orders.lookup":
            return await _lookup(scenario, args, key)
        if params.name == "refunds.issue":
            replayed = args["idempotency_key"] in refunds
            stored = refunds.setdefault(args["idempotency_key"], _receipt(args))
            return _ok({"receipt": stored, "replayed": replayed})
        if params.name == "refunds.get":
            receipt = refunds.get(args["idempotency_key"])
            return _ok({"found": receipt is not None, "receipt": receipt})
        return _error(ErrorCode.NOT_FOUND, f"no tool {params.name}")

    return Server(f"accord-test-{scenario}", on_list_tools=list_tools, on_call_tool=call_tool)


async def _lookup(scenario: str, args: Mapping[str, Any], key: str) -> types.CallToolResult:
    order_id, customer_id = str(args["order_id"]), str(args["customer_id"])
    if scenario == "bad_output":
        return _ok({"order_id": 5})
    if scenario == "slow":
        await anyio.sleep(SLOW_SECONDS)
    if scenario == "flaky":
        # The first digit of the order number says how many attempts fail before one succeeds.
        failures = int(order_id[2])
        if CALLS[f"{scenario}|orders.lookup|{key}"] <= failures:
            return _error(ErrorCode.RETRYABLE_TIMEOUT, "the warehouse did not answer in time")
    if order_id.startswith("O-0404"):
        return _error(ErrorCode.NOT_FOUND, "no such order for this customer")
    if order_id.startswith("O-0503"):  # a server that claims its answer was never sent
        return _error(ErrorCode.UNAVAILABLE, "busy", {"sent": False})
    if order_id.startswith("O-0504"):  # the same claim in a JSON-RPC error instead
        error = AccordError(ErrorCode.UNAVAILABLE, "busy", {"sent": False}).to_jsonrpc_error()
        raise MCPError(error["code"], error["message"], error["data"])
    return _ok(_order(order_id, customer_id))


def _receipt(args: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "receipt_id": f"R-{len(args['idempotency_key'])}",
        "idempotency_key": args["idempotency_key"],
        "order_id": args["order_id"],
        "customer_id": args["customer_id"],
        "amount_cents": args["amount_cents"],
        "currency": "EUR",
        "reason": args["reason"],
        "approved_by": args.get("approved_by"),
        "created_at": "2025-01-06T10:00:00Z",
    }


def build_app() -> Starlette:
    servers = {name: build_server(name) for name in SCENARIOS}
    routes: list[Route | Mount] = [
        Route("/healthz", lambda _r: PlainTextResponse("ok")),
        Route("/calls", lambda _r: JSONResponse(dict(CALLS))),
        Route("/http503/mcp", _unavailable, methods=["GET", "POST", "DELETE"]),
    ]
    for name, server in servers.items():
        app = server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True
        )
        routes.append(Mount(f"/{name}", app=app))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # Mounted apps' lifespans never run: the session managers are started here.
        async with contextlib.AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    return Starlette(routes=routes, lifespan=lifespan)


async def _unavailable(_request: Request) -> Response:
    return PlainTextResponse("upstream down", status_code=503)


async def _serve_stdio(scenario: str) -> None:
    server = build_server(scenario, stdio=True)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stdio", choices=SCENARIOS)
    ns = parser.parse_args()
    if ns.stdio:
        anyio.run(_serve_stdio, ns.stdio)
        return
    uvicorn.run(build_app(), host="127.0.0.1", port=ns.port, log_level="warning")


if __name__ == "__main__":
    main()
