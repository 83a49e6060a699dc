"""The contract-checked MCP client: every configured tool server, checked, behind one `call`.

::

    async with ToolClient.from_config() as tools:
        order = await tools.call("orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"})

Entering the client connects to every server (Streamable HTTP or stdio), lists its tools and
checks them against their contracts (accord.protocol.mcp.check); any departure is one
CONTRACT_VIOLATION before a single tool runs. `call` then:

- refuses a write tool (``contract.is_write``) without an idempotency key, and arguments
  outside the input schema, with INVALID_INPUT before anything is sent;
- carries ``traceparent`` in ``params._meta`` (SEP-414): the context of its own
  ``execute_tool {tool}`` CLIENT span, under the caller's active span or ``traceparent=``;
- returns the structured output after validating it against the contract's output schema
  (CONTRACT_VIOLATION otherwise), or raises the contract error the server put in ``_meta``;
- retries by the error's retry class (accord.contracts.retry.decide), each attempt under a
  timeout (RETRYABLE_TIMEOUT).

Library failures become contract errors at one boundary: :func:`map_exception` for exceptions
and :class:`_BoundaryTransport` for HTTP (connection refused, 5xx, timeouts), which answers a
failed POST with a JSON-RPC error carrying the contract code so that the SDK's session survives
and the caller reads the same error type either way.

One SDK session per server is kept open (the stateless HTTP servers accept that) and shared by
concurrent calls. Each session lives in its own task so that a dead one (a stdio server that
exited) is replaced on the next attempt without disturbing the caller's task.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND, REQUEST_TIMEOUT
from opentelemetry.trace import SpanKind
from pydantic import ValidationError

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import TRACEPARENT_KEY
from accord.contracts.retry import Action, RetryPolicy, decide
from accord.contracts.tools import IDEMPOTENCY_FIELD, ToolContract
from accord.protocol import telemetry
from accord.protocol.mcp.check import check_tools, violation
from accord.protocol.mcp.config import DEFAULT_TIMEOUT_S, ServerSpec, ToolsConfig, load_config
from accord.protocol.mcp.in_process import in_process_transport
from accord.protocol.telemetry import instruments, spans

_LIST_PAGE_CAP: Final = 50
_HTTP_LIMITS: Final = httpx2.Limits(max_connections=100, max_keepalive_connections=20)


# -- the boundary: library failures in, contract errors out ----------------------------------
def map_exception(exc: BaseException, server: str) -> AccordError:
    """The contract error for anything the SDK, the transport or the OS raised."""
    leaf = _first_leaf(exc)
    if isinstance(leaf, AccordError):
        return leaf
    where = {"server": server}
    if isinstance(leaf, MCPError):
        if leaf.code == REQUEST_TIMEOUT:
            return AccordError(
                ErrorCode.RETRYABLE_TIMEOUT, f"tool server {server!r} did not answer in time", where
            )
        if leaf.code == CONNECTION_CLOSED:
            return AccordError(
                ErrorCode.UNAVAILABLE, f"the connection to tool server {server!r} closed", where
            )
        return AccordError.from_jsonrpc_error(
            {"code": leaf.code, "message": leaf.message, "data": leaf.data}
        )
    if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
        return AccordError(
            ErrorCode.RETRYABLE_TIMEOUT, f"tool server {server!r} did not answer in time", where
        )
    if isinstance(
        leaf,
        httpx2.TransportError
        | OSError
        | anyio.BrokenResourceError
        | anyio.ClosedResourceError
        | anyio.EndOfStream,
    ):
        return AccordError(
            ErrorCode.UNAVAILABLE,
            f"tool server {server!r} is unreachable",
            {**where, "cause": type(leaf).__name__},
        )
    if isinstance(leaf, ValidationError):
        return AccordError(
            ErrorCode.CONTRACT_VIOLATION,
            f"tool server {server!r} sent a malformed MCP message",
            where,
        )
    return AccordError(
        ErrorCode.INTERNAL,
        f"unexpected failure talking to {server!r}",
        {**where, "cause": type(leaf).__name__},
    )


def _first_leaf(exc: BaseException) -> BaseException:
    """The first real failure inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def _session_broken(exc: BaseException) -> bool:
    """Whether the session itself is gone (as opposed to one request failing on it)."""
    leaf = _first_leaf(exc)
    if isinstance(leaf, MCPError):
        return leaf.code == CONNECTION_CLOSED
    return isinstance(
        leaf, OSError | anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream
    )


def _http_failure(server: str, status: int, body: bytes) -> AccordError:
    """A non-JSON-RPC HTTP error answer as a contract error (the contract's reading of a bare
    status, :func:`~accord.contracts.errors.code_for_http_status`, when it carries no code)."""
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    found = AccordError.from_http(status, parsed if isinstance(parsed, dict) else None)
    if (
        isinstance(parsed, dict)
        and isinstance(parsed.get("error"), dict)
        and "code" in parsed["error"]
    ):
        return found  # an Accord side door said exactly what went wrong
    return AccordError(
        found.code,
        f"tool server {server!r} answered HTTP {status}",
        {"server": server, "http_status": status},
    )


class _BoundaryTransport(httpx2.AsyncBaseTransport):
    """Answers a JSON-RPC POST that failed below MCP with a JSON-RPC error in contract form.

    The SDK would otherwise tear the whole session down on a refused connection and report
    every HTTP error status as the same INTERNAL_ERROR. 404 passes through untouched: the SDK
    reads it as "method not found" while negotiating the protocol version with older servers.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport, server: str) -> None:
        self._inner = inner
        self._server = server

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TimeoutException:
            return self._answer(
                request,
                AccordError(
                    ErrorCode.RETRYABLE_TIMEOUT,
                    f"tool server {self._server!r} did not answer in time",
                    {"server": self._server},
                ),
            )
        except httpx2.TransportError as exc:
            return self._answer(
                request,
                AccordError(
                    ErrorCode.UNAVAILABLE,
                    f"tool server {self._server!r} is unreachable",
                    {"server": self._server, "cause": type(exc).__name__},
                ),
            )
        if response.status_code < 400 or response.status_code == 404:
            return response
        body = await response.aread()
        await response.aclose()
        if _is_jsonrpc(body):
            return httpx2.Response(
                response.status_code, headers=response.headers, content=body, request=request
            )
        return self._answer(request, _http_failure(self._server, response.status_code, body))

    def _answer(self, request: httpx2.Request, error: AccordError) -> httpx2.Response:
        try:
            sent = json.loads(request.content) if request.method == "POST" else None
        except ValueError:
            sent = None
        if not isinstance(sent, dict) or "id" not in sent:
            if request.method == "POST":  # a notification: nothing waits for an answer
                return httpx2.Response(202, request=request)
            raise httpx2.ConnectError(error.message, request=request)
        payload = {"jsonrpc": "2.0", "id": sent["id"], "error": error.to_jsonrpc_error()}
        return httpx2.Response(200, json=payload, request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_jsonrpc(body: bytes) -> bool:
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    return isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0"


# -- one server ----------------------------------------------------------------------------
@dataclass
class _Live:
    """One live SDK session and the task that owns it."""

    ready: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    session: ClientSession | None = None
    tools: list[types.Tool] = field(default_factory=list)
    error: AccordError | None = None
    closed: bool = False


class _Connection:
    """Keeps one checked session to one server, reconnecting (and re-checking) when it dies."""

    def __init__(
        self, spec: ServerSpec, task_group: anyio.abc.TaskGroup, connect_timeout_s: float
    ) -> None:
        self.spec = spec
        self._tg = task_group
        self._connect_timeout_s = connect_timeout_s
        self._live: _Live | None = None
        self._lock = anyio.Lock()

    @property
    def tools(self) -> list[types.Tool]:
        return self._live.tools if self._live else []

    async def session(self) -> ClientSession:
        live = self._live
        if live is not None and live.session is not None and not live.closed:
            return live.session
        async with self._lock:
            live = self._live
            if live is None or live.session is None or live.closed:
                live = await self._connect()
                self._live = live
        assert live.session is not None
        return live.session

    async def _connect(self) -> _Live:
        live = _Live()
        self._tg.start_soon(self._run, live)
        try:
            with anyio.move_on_after(self._connect_timeout_s) as waited:
                await live.ready.wait()
        except BaseException:  # the caller gave up (cancelled): no session left behind
            live.scope.cancel()
            raise
        if waited.cancelled_caught:
            live.scope.cancel()
            raise AccordError(
                ErrorCode.RETRYABLE_TIMEOUT,
                f"tool server {self.spec.name!r} did not answer in time while connecting",
                {"server": self.spec.name},
            )
        if live.error is not None:
            raise live.error
        findings = check_tools(self.spec.name, live.tools, self.spec.contracts)
        if findings:
            live.stop.set()
            raise violation(self.spec.name, findings)
        return live

    async def _run(self, live: _Live) -> None:
        with live.scope:
            try:
                async with AsyncExitStack() as stack:
                    client = Client(await self._transport(stack), cache=None)
                    await stack.enter_async_context(client)
                    live.tools = await _list_all(client.session)
                    live.session = client.session
                    live.ready.set()
                    await live.stop.wait()
            except Exception as exc:  # the boundary: whatever ended this session, as a contract
                live.error = (
                    self._connect_error(exc)
                    if live.session is None
                    else (map_exception(exc, self.spec.name))
                )
            finally:
                live.closed = True
                live.ready.set()

    def _connect_error(self, exc: BaseException) -> AccordError:
        leaf = _first_leaf(exc)
        if isinstance(leaf, MCPError) and leaf.code == METHOD_NOT_FOUND:
            # The HTTP transport's spelling of a 404: nothing speaks MCP at this address.
            return AccordError(
                ErrorCode.NOT_FOUND,
                f"no MCP server at {self.spec.target} ({self.spec.name})",
                {"server": self.spec.name},
            )
        return map_exception(exc, self.spec.name)

    async def _transport(self, stack: AsyncExitStack) -> Any:
        spec = self.spec
        if spec.transport == "stdio":
            assert spec.command is not None
            return StdioServerParameters(
                command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
            )
        assert spec.url is not None
        # A server registered in this process (mcp/in_process.py) is reached without a socket.
        inner = in_process_transport(spec.url) or httpx2.AsyncHTTPTransport(limits=_HTTP_LIMITS)
        http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(30.0, read=300.0),
            transport=_BoundaryTransport(inner, spec.name),
        )
        await stack.enter_async_context(http)
        return streamable_http_client(spec.url, http_client=http)

    def discard(self, session: ClientSession) -> None:
        """Give up ``session`` if it is still current; the next `session()` opens a new one."""
        live = self._live
        if live is not None and live.session is session:
            live.closed = True
            live.stop.set()

    def close(self) -> None:
        if self._live is not None:
            self._live.stop.set()


async def _list_all(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGE_CAP):
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


# -- the client ----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Route:
    connection: _Connection
    contract: ToolContract
    input_validator: Draft202012Validator
    output_validator: Draft202012Validator
    timeout_s: float


class ToolClient:
    """Calls contracted tools on the configured MCP servers (an async context manager)."""

    def __init__(
        self,
        servers: Sequence[ServerSpec],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        connect_timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
    ) -> None:
        names = [s.name for s in servers]
        if len(set(names)) != len(names):
            raise AccordError(ErrorCode.INVALID_INPUT, "tool server names must be unique")
        self._specs = tuple(servers)
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._retry = retry or RetryPolicy()
        self._stack: AsyncExitStack | None = None
        self._connections: dict[str, _Connection] = {}
        self._routes: dict[str, _Route] = {}

    @classmethod
    def from_config(
        cls, path: Path | str | None = None, config: ToolsConfig | None = None
    ) -> ToolClient:
        """A client for the configured servers (explicit path, ACCORD_TOOLS_CONFIG, default)."""
        cfg = config or load_config(path)
        return cls(
            cfg.servers,
            timeout_s=cfg.timeout_s,
            connect_timeout_s=cfg.connect_timeout_s,
            retry=cfg.retry,
        )

    @classmethod
    def for_servers(cls, servers: Sequence[ServerSpec], **options: Any) -> ToolClient:
        """A client for servers given in code (tests, embedding)."""
        return cls(servers, **options)

    # -- lifecycle --------------------------------------------------------------------------
    async def __aenter__(self) -> ToolClient:
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            tg = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tg.cancel_scope.cancel)  # runs first on exit: ends every session
            for spec in self._specs:
                conn = _Connection(spec, tg, self._connect_timeout_s)
                stack.callback(conn.close)
                self._connections[spec.name] = conn
                for contract in spec.contracts:
                    self._routes[contract.name] = _Route(
                        conn,
                        contract,
                        contract.input_validator(),
                        contract.output_validator(),
                        spec.timeout_s or self._timeout_s,
                    )
            error = await self._connect_all()
        except BaseException:
            await stack.aclose()
            raise
        if error is not None:
            # Raised after the task group is closed, so the caller gets the AccordError itself
            # and not an exception group around it.
            await stack.aclose()
            raise error
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def _connect_all(self) -> AccordError | None:
        """Connect to every server at once; the first failure in configuration order."""
        errors: dict[str, AccordError] = {}

        async def one(conn: _Connection) -> None:
            try:
                await conn.session()
            except AccordError as err:
                errors[conn.spec.name] = err

        async with anyio.create_task_group() as tg:
            for conn in self._connections.values():
                tg.start_soon(one, conn)
        return next((errors[s.name] for s in self._specs if s.name in errors), None)

    # -- facts ------------------------------------------------------------------------------
    @property
    def contracts(self) -> dict[str, ToolContract]:
        """Every callable tool's contract, by tool name."""
        return {name: route.contract for name, route in self._routes.items()}

    def listed(self, server: str) -> list[types.Tool]:
        """What ``server`` listed when it was last (re)connected, contracted or not."""
        return self._connections[server].tools

    # -- calls ------------------------------------------------------------------------------
    async def call(
        self,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        traceparent: str | None = None,
        idempotency_key: str | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """Call a contracted tool; its validated structured output, or a contract AccordError."""
        route = self._routes.get(tool_name)
        if route is None:
            raise AccordError(
                ErrorCode.NOT_FOUND,
                f"no configured tool server offers {tool_name!r}",
                {"tool": tool_name},
            )
        args = _prepare(route.contract, route.input_validator, arguments, idempotency_key)
        attributes = spans.tool_attributes(
            tool_name, {spans.TOOL_SERVER: route.connection.spec.name}
        )
        started = time.monotonic()
        # One CLIENT span per call, retries included (each one an event on it); the server's
        # execute_tool span hangs under it through the traceparent in _meta.
        with telemetry.span(
            f"{spans.EXECUTE_TOOL} {tool_name}",
            kind=SpanKind.CLIENT,
            context=spans.parent_context(traceparent),
            attributes=attributes,
        ) as span:
            trace = spans.current_traceparent() or traceparent
            # RequestParamsMeta is an open TypedDict (PEP 728) that mypy cannot extend yet.
            meta = cast(types.RequestParamsMeta, {TRACEPARENT_KEY: trace}) if trace else None
            attempt = 1
            try:
                while True:
                    try:
                        return await self._attempt(route, args, meta, timeout_s or route.timeout_s)
                    except AccordError as err:
                        elapsed_ms = int((time.monotonic() - started) * 1000)
                        decision = decide(err.code, attempt, elapsed_ms, self._retry)
                        if decision.action is not Action.RETRY:
                            raise
                        span.add_event(
                            "retry",
                            {
                                spans.ERROR_TYPE: err.code.value,
                                spans.ATTEMPT: attempt,
                                "accord.retry.delay_ms": decision.delay_ms,
                            },
                        )
                        await anyio.sleep(decision.delay_ms / 1000)
                        attempt += 1
            except BaseException as exc:
                attributes[spans.ERROR_TYPE] = spans.error_type(exc)
                raise
            finally:
                span.set_attribute(spans.ATTEMPT, attempt)
                instruments.client_duration.record(time.monotonic() - started, attributes)

    async def _attempt(
        self,
        route: _Route,
        args: dict[str, Any],
        meta: types.RequestParamsMeta | None,
        timeout_s: float,
    ) -> dict[str, Any]:
        server = route.connection.spec.name
        name = route.contract.name
        session: ClientSession | None = None
        try:
            with anyio.fail_after(timeout_s):
                session = await route.connection.session()
                request = types.CallToolRequest(
                    params=types.CallToolRequestParams(name=name, arguments=args, _meta=meta)
                )
                # send_request, not session.call_tool: the SDK would check the output against
                # the schema the server advertises; we check it against the contract below.
                result = await session.send_request(
                    request, types.CallToolResult, request_read_timeout_seconds=timeout_s
                )
        except AccordError:
            raise
        except Exception as exc:
            if session is not None and _session_broken(exc):
                route.connection.discard(session)  # the next attempt connects (and checks) afresh
            raise map_exception(exc, server) from None
        if result.is_error:
            raise AccordError.from_mcp_result(result.model_dump(by_alias=True, mode="json"))
        output = result.structured_content
        if not isinstance(output, dict):
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                f"tool {name!r} returned no structured output",
                {"server": server, "tool": name},
            )
        error = best_match(route.output_validator.iter_errors(output))
        if error is not None:
            where = "/" + "/".join(str(p) for p in error.absolute_path)
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                f"tool {name!r} returned output outside its contract at {where}: "
                f"{error.message[:300]}",
                {"server": server, "tool": name, "where": where, "rule": str(error.validator)},
            )
        return output


def _prepare(
    contract: ToolContract,
    validator: Draft202012Validator,
    arguments: Mapping[str, Any],
    idempotency_key: str | None,
) -> dict[str, Any]:
    """Arguments ready to send, or INVALID_INPUT before anything leaves this process."""
    args = dict(arguments)
    declared = IDEMPOTENCY_FIELD in contract.input_schema.get("properties", {})
    if idempotency_key is not None:
        given = args.get(IDEMPOTENCY_FIELD)
        if given is not None and given != idempotency_key:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                "two different idempotency keys were given",
                {"tool": contract.name},
            )
        if declared:
            args[IDEMPOTENCY_FIELD] = idempotency_key
    key = idempotency_key or args.get(IDEMPOTENCY_FIELD)
    if contract.is_write and not key:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"{contract.name} writes ({contract.side_effect.value}): it needs an "
            "idempotency key, and none was given",
            {"tool": contract.name},
        )
    error = best_match(validator.iter_errors(args))
    if error is not None:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"arguments of {contract.name} break its input schema at {where}: "
            f"{error.message[:300]}",
            {"tool": contract.name, "where": where, "rule": str(error.validator)},
        )
    return args


async def list_server_tools(
    spec: ServerSpec, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> list[types.Tool]:
    """What a server lists, unchecked (for `accord tools check`)."""
    bare = ServerSpec(
        name=spec.name,
        transport=spec.transport,
        contracts=(),
        url=spec.url,
        command=spec.command,
        args=spec.args,
        env=spec.env,
        cwd=spec.cwd,
    )
    async with ToolClient([bare], connect_timeout_s=timeout_s) as client:
        return client.listed(spec.name)
