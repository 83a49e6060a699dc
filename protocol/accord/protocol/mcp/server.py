"""MCP tool servers declared from contracts (mcp 2.3.0, low-level server).

A tool is its :class:`~accord.contracts.tools.ToolContract` plus an async handler. Everything a
client sees in ``tools/list`` (name, title, description, input and output schema, annotations)
comes from the contract verbatim; nothing is retyped here. Each call goes through one boundary,
:meth:`ToolServer.call`:

    arguments ── jsonschema(input) ──> handler ── jsonschema(output) ──> structuredContent + text
        │ bad input: INVALID_INPUT      │ AccordError: its code      │ bad output: INTERNAL
        └──────────────── isError + JSON text + _meta[MCP_ERROR_META_KEY] ─────────────────┘

Before the handler, the contract's ``access`` section decides who may call and for whom
(accord.protocol.mcp.access): over HTTP every request carries a verified principal
(accord.protocol.mcp._server_auth), and the handler learns the customer and the approver from
the verified call (:class:`CallContext`), never from an argument nobody verified.

Python exception text never reaches a client: unknown exceptions are logged here and answered
as INTERNAL. The low-level server is used rather than ``MCPServer`` because it lets the
contract's JSON Schema be the advertised schema byte for byte and lets us validate arguments
ourselves, so bad input is a contract error instead of pydantic text.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anyio
import mcp_types as types
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from opentelemetry.trace import SpanKind
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from accord.contracts.envelope import Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    CONTRACT_VERSIONS_META_KEY,
    HEALTH_PATH,
    READY_PATH,
    TRACEPARENT_KEY,
)
from accord.contracts.tools import IDEMPOTENCY_FIELD, IdempotencyKey, ToolContract
from accord.contracts.validation import schema_path
from accord.protocol import telemetry
from accord.protocol.auth import DEFAULT_APP, Principal
from accord.protocol.auth.verify import Authenticator
from accord.protocol.jwks_route import jwks_route
from accord.protocol.mcp._server_auth import ToolAuthGate, metadata_routes, principal_of
from accord.protocol.mcp._server_http import transport_security
from accord.protocol.mcp._server_requests import DEFAULT_MAX_BODY_BYTES, McpRequestGate
from accord.protocol.mcp.access import authorize, check_caller
from accord.protocol.mcp.fault_injection import development_tools
from accord.protocol.schema_check import CompiledSchema
from accord.protocol.settings import current
from accord.protocol.telemetry import instruments, spans

logger = logging.getLogger("accord.protocol.mcp.server")

MCP_PATH: Final = "/mcp"

current_traceparent: ContextVar[str | None] = ContextVar("accord_mcp_traceparent", default=None)
"""W3C traceparent of the tool call being served (from ``params._meta``), for logs and spans."""


@dataclass(frozen=True)
class CallContext:
    """What a handler may know about the call besides its arguments: what the server verified.

    ``customer_id`` and ``approved_by`` are the verified values of the contract's
    ``access.customer_field`` / ``approver_field`` (equal to the arguments when they are given:
    a differing argument was refused before the handler ran). ``app`` is the verified tenant
    app (the delegation's, else the credential's; one this server serves). ``principal`` is
    None for the stdio parent process, which the transport trusts.
    """

    tool: str
    traceparent: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    principal: Principal | None = None
    app: str = DEFAULT_APP
    customer_id: str | None = None
    approved_by: str | None = None
    tenant: Tenant | None = None


ToolHandler = Callable[[dict[str, Any], CallContext], Awaitable[dict[str, Any]]]


class Resources(Protocol):
    """What a tool server depends on (its database): started once, probed by ``/readyz``."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def ready(self) -> bool: ...


class NoResources:
    """For servers without dependencies (the benchmark's echo server)."""

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def ready(self) -> bool:
        return True


@dataclass(frozen=True)
class ContractTool:
    """A tool as served: its contract, its handler, and its schemas compiled once
    (:mod:`accord.protocol.schema_check`)."""

    contract: ToolContract
    handler: ToolHandler
    inputs: CompiledSchema = field(init=False, repr=False)
    outputs: CompiledSchema = field(init=False, repr=False)
    declared: frozenset[ErrorCode] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = self.contract
        object.__setattr__(self, "inputs", CompiledSchema(c.input_schema))
        object.__setattr__(self, "outputs", CompiledSchema(c.output_schema))
        object.__setattr__(self, "declared", frozenset(c.errors))

    def descriptor(self) -> types.Tool:
        """The ``tools/list`` entry, every field taken from the contract."""
        c = self.contract
        return types.Tool(
            name=c.name,
            title=c.title,
            description=c.description,
            input_schema=c.input_schema,
            output_schema=c.output_schema,
            annotations=types.ToolAnnotations.model_validate(c.mcp_annotations()),
            _meta={CONTRACT_VERSIONS_META_KEY: c.served_versions},
        )


def tool(contract: ToolContract, handler: ToolHandler) -> ContractTool:
    return ContractTool(contract, handler)


def error_result(error: AccordError) -> types.CallToolResult:
    """The MCP form of a contract error, exactly as ``AccordError.to_mcp_result`` shapes it."""
    return types.CallToolResult.model_validate(error.to_mcp_result())


def success_result(output: Mapping[str, Any]) -> types.CallToolResult:
    text = json.dumps(output, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=dict(output)
    )


def _error_code(result: types.CallToolResult) -> ErrorCode | None:
    """The contract code of an error result (read back from the _meta we wrote), else None."""
    if not result.is_error:
        return None
    return AccordError.from_mcp_result(result.model_dump(by_alias=True, mode="json")).code


def _input_error(served: ContractTool, arguments: dict[str, Any]) -> AccordError | None:
    """INVALID_INPUT naming the offending fields and rules, never echoing the values."""
    if served.inputs.is_valid(arguments):
        return None
    contract = served.contract
    problems: list[dict[str, str]] = []
    for err in served.inputs.iter_errors(arguments):
        path = schema_path(err, pointer=True)
        field_name = path
        if err.validator == "required" and isinstance(err.validator_value, list):
            given = err.instance if isinstance(err.instance, dict) else {}
            missing = [k for k in err.validator_value if k not in given]
            field_name = "/" + ",".join(str(k) for k in missing)
        problems.append({"field": field_name, "rule": str(err.validator)})
        if len(problems) >= 10:
            break
    if not problems:  # the two validators disagree: still refuse, the fast one is the gate
        problems.append({"field": "/", "rule": "schema"})
    key_missing = contract.idempotency_key is IdempotencyKey.REQUIRED and not isinstance(
        arguments.get(IDEMPOTENCY_FIELD), str
    )
    message = (
        f"{contract.name} requires an {IDEMPOTENCY_FIELD}"
        if key_missing
        else f"arguments do not match the input schema of {contract.name}"
    )
    return AccordError(ErrorCode.INVALID_INPUT, message, {"problems": problems})


class ToolServer:
    """A set of contract tools behind one MCP low-level server."""

    def __init__(
        self,
        name: str,
        version: str,
        tools: Sequence[ContractTool],
        *,
        resources: Resources | None = None,
        instructions: str | None = None,
    ) -> None:
        self.name = name
        # Development aids wrap handlers here, once (ACCORD_FAULTS with ACCORD_DEV=1); without
        # them these are the tools as given, and the call path below has no fault branch.
        tools = development_tools(tools)
        self.tools: dict[str, ContractTool] = {t.contract.name: t for t in tools}
        if len(self.tools) != len(tools):
            raise ValueError(f"{name}: two tools share a name")
        self.resources: Resources = resources or NoResources()
        # Built once: tools/list is the same answer for every caller.
        self._listing = types.ListToolsResult(tools=[t.descriptor() for t in tools])
        self.lowlevel: Server[None] = Server(
            name,
            version=version,
            instructions=instructions,
            lifespan=self._lifespan,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
        )
        if not current().otel_library_spans:
            # The SDK's own SERVER span per message (``tools/call NAME``) would go to the no-op
            # tracer that library scopes get (telemetry/setup.py): extracting the caller's
            # context from _meta and entering a span for nothing, ~6% of a tool server's CPU.
            # Ours, ``execute_tool NAME``, is made in call() from the same _meta. The SDK's
            # documented opt-out is dropping it from this list.
            self.lowlevel.middleware = [
                m for m in self.lowlevel.middleware if not isinstance(m, OpenTelemetryMiddleware)
            ]

    # -- MCP handlers --------------------------------------------------------------------------
    @asynccontextmanager
    async def _lifespan(self, _server: Server[None]) -> AsyncIterator[None]:
        # Entered once per process by the HTTP session manager and by the stdio runner.
        await self.resources.start()
        try:
            yield None
        finally:
            await self.resources.stop()

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        found = self.tools.get(name)
        return found.contract.input_schema if found else None

    async def _on_list_tools(
        self, _ctx: Any, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self._listing

    async def _on_call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in self.tools:
            # Unknown tool is a protocol error (JSON-RPC -32602), as the MCP spec asks.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name[:64]}")
        meta = dict(ctx.meta or {}) if ctx is not None else {}
        request = getattr(ctx, "request", None)
        if request is None:  # stdio (or the SDK's in-memory transport): the parent is trusted
            return await self.call(params.name, params.arguments, meta)
        principal = principal_of(request.scope)
        if principal is None:
            # Served over HTTP without build_http_app's gate: refuse rather than trust.
            logger.error("%s called over HTTP without a verified principal", params.name)
            return error_result(AccordError(ErrorCode.UNAUTHENTICATED, "no verified principal"))
        return await self.call(params.name, params.arguments, meta, principal=principal)

    # -- the one boundary ------------------------------------------------------------------------
    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None = None,
        *,
        principal: Principal | None = None,
    ) -> types.CallToolResult:
        """Serve one call of a known tool; always a result, never an exception.

        ``principal`` is the verified caller (HTTP); None is the trusted stdio parent.
        """
        served = self.tools[name]
        meta = meta or {}
        raw_tp = meta.get(TRACEPARENT_KEY)
        traceparent = raw_tp if isinstance(raw_tp, str) and len(raw_tp) <= 128 else None
        token = current_traceparent.set(traceparent)
        started = time.perf_counter()
        try:
            # The SERVER span of the call, under the caller's context from _meta (SEP-414).
            with telemetry.span(
                f"{spans.EXECUTE_TOOL} {name}",
                kind=SpanKind.SERVER,
                context=spans.context_of(traceparent),
                attributes=spans.tool_attributes(
                    name, {spans.TOOL_SERVER: self.name, "mcp.method.name": "tools/call"}
                ),
            ) as span:
                result = await self._call(
                    served, dict(arguments or {}), meta, traceparent, principal
                )
                code = _error_code(result)
                if code is not None:
                    telemetry.mark_error(span, code)
        finally:
            current_traceparent.reset(token)
        measured = {spans.GEN_AI_TOOL_NAME: name}
        if code is not None:
            measured[spans.ERROR_TYPE] = code.value
        instruments.tool_calls.add(1, measured)
        instruments.tool_duration.record(time.perf_counter() - started, measured)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "tool=%s error=%s ms=%.2f traceparent=%s",
                name,
                result.is_error,
                (time.perf_counter() - started) * 1000,
                traceparent,
            )
        return result

    async def _call(
        self,
        served: ContractTool,
        arguments: dict[str, Any],
        meta: Mapping[str, Any],
        traceparent: str | None,
        principal: Principal | None,
    ) -> types.CallToolResult:
        name = served.contract.name
        try:
            # Who may call comes first: a refused caller learns nothing, not even the schema.
            check_caller(served.contract, principal)
        except AccordError as refused:
            return error_result(refused)
        invalid = _input_error(served, arguments)
        if invalid is not None:
            return error_result(invalid)
        try:
            verified = authorize(served.contract, principal, arguments, meta)
        except AccordError as refused:
            return error_result(refused)
        context = CallContext(
            name,
            traceparent,
            meta,
            principal=principal,
            app=verified.app,
            customer_id=verified.customer_id,
            approved_by=verified.approved_by,
            tenant=verified.tenant,
        )
        try:
            output = await served.handler(arguments, context)
        except AccordError as err:
            if err.code not in served.declared and err.code is not ErrorCode.INTERNAL:
                logger.error("%s raised undeclared %s: %s", name, err.code.value, err.message)
                return error_result(AccordError(ErrorCode.INTERNAL))
            return error_result(err)
        except Exception:
            logger.exception("%s failed (traceparent=%s)", name, traceparent)
            return error_result(AccordError(ErrorCode.INTERNAL))
        if not served.outputs.is_valid(output):
            # Our own bug: the client must never see a result that breaks the contract.
            where = [
                (schema_path(e), str(e.validator)) for e in served.outputs.iter_errors(output)
            ][:5]
            logger.error("%s produced output outside its schema: %s", name, where)
            return error_result(AccordError(ErrorCode.INTERNAL))
        return success_result(output)


# -- transports ------------------------------------------------------------------------------
def build_http_app(
    server: ToolServer,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    authenticator: Authenticator | None = None,
    service_name: str | None = None,
) -> ASGIApp:
    """Streamable HTTP (stateless, JSON responses) at ``/mcp`` plus ``/healthz``, ``/readyz`` and
    the protected-resource metadata, public; ``/mcp`` needs a verified principal (the
    ``authenticator``'s: by default the one every Accord service uses).

    ``/healthz`` and ``/readyz`` answer ``service_name`` (the name it is served as,
    ``notes``; by default the MCP server's name), as the agents answer theirs.

    ``allowed_hosts`` are Host header patterns (``"127.0.0.1:*"``); ``None`` reads
    ``ACCORD_ALLOWED_HOSTS`` and, when that is unset too, means loopback names on a loopback
    bind and no check on other binds; ``["*"]`` switches the check off.
    """
    if allowed_hosts is None:
        allowed_hosts = current().allowed_hosts
    mcp_app = server.lowlevel.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(host, allowed_hosts),
        max_request_body_size=max_body_bytes,
        host=host,
    )

    served_as = service_name or server.name

    async def healthz(_request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "service": served_as})

    async def readyz(_request: Request) -> JSONResponse:
        try:
            ok = await server.resources.ready()
        except Exception:
            logger.exception("readiness probe failed")
            ok = False
        if ok:
            return JSONResponse({"status": "ready", "service": served_as})
        status, body = AccordError(ErrorCode.UNAVAILABLE, "database unreachable").to_http()
        return JSONResponse(body, status_code=status)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # A mounted app's own lifespan never runs: the session manager is started here.
        async with server.lowlevel.session_manager.run():
            yield

    grants = sorted(
        {g for t in server.tools.values() if t.contract.access for g in t.contract.access.grants}
    )
    documents = metadata_routes(server.name, MCP_PATH, grants)
    jwks = jwks_route(served_as)  # the keys its own tokens (to other tool servers) are signed with
    app = Starlette(
        routes=[
            Route(HEALTH_PATH, healthz),
            Route(READY_PATH, readyz),
            jwks,
            *documents,
            Mount("/", app=mcp_app),
        ],
        lifespan=lifespan,
    )
    # The gate first: a caller without a credential is answered before its body is read.
    return ToolAuthGate(
        McpRequestGate(app, endpoint_path=MCP_PATH, max_body_bytes=max_body_bytes),
        authenticator=authenticator or Authenticator(),
        public_paths=[HEALTH_PATH, READY_PATH, jwks.path, *(r.path for r in documents)],
        endpoint_path=MCP_PATH,
    )


def run_stdio(server: ToolServer) -> None:
    """Serve over stdin/stdout until the client closes it (logs go to stderr)."""

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.lowlevel.run(
                read_stream, write_stream, server.lowlevel.create_initialization_options()
            )

    anyio.run(main)
