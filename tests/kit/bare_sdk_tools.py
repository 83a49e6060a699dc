"""A tool server as a team without Accord writes it: the bare mcp SDK's ``MCPServer``, schemas
generated from type hints (with pydantic's ``title`` keys), its contract in
tests/kit/contracts/stock.check.yaml.

Run: ``python -m tests.kit.bare_sdk_tools MODE PORT``. It imports nothing of Accord.

    meta-errors  an unknown SKU is NOT_FOUND in ``_meta["dev.accord/error"]`` (a handler that
                 returns its own CallToolResult, as docs/porting.md says); bad arguments are
                 the SDK's own text error, without a code (what a bare SDK does)
    text-errors  an unknown SKU is ``raise ToolError``: text, no code
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import mcp_types as types
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

MODES = ("meta-errors", "text-errors")
ERROR_KEY = "dev.accord/error"  # the contract's key, spelled as a foreign team would copy it
STOCK = {"S-1": 3}


class Stock(BaseModel):
    sku: str
    available: bool


def build_app(mode: str) -> Starlette:
    server = MCPServer("bare-stock", version="0.0.1")
    read_only = types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    @server.tool(name="stock.check", annotations=read_only)
    def check(sku: str, quantity: int) -> Annotated[types.CallToolResult, Stock]:
        if sku not in STOCK:
            if mode == "text-errors":
                raise ToolError(f"no such SKU {sku}")
            error: dict[str, Any] = {"code": "NOT_FOUND", "retry": "stop", "message": "no SKU"}
            return types.CallToolResult(
                is_error=True,
                content=[types.TextContent(type="text", text=json.dumps({"error": error}))],
                _meta={ERROR_KEY: error},
            )
        out = {"sku": sku, "available": STOCK[sku] >= quantity}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(out))],
            structured_content=out,
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
