"""The contract-checked MCP client: every configured tool server, checked, behind one `call`.

One client per process, started and closed once (after the MCP SDK's ``ClientSessionGroup``)::

    tools = ToolClient.from_config()    # ACCORD_TOOLS_CONFIG (or ``default=`` the app's file)
    await tools.start()              # a service's lifespan: ``async with tools.running():``
    note = await tools.call("notes.get", {"note_id": "N-1", "user": "ada"})
    await tools.aclose()

    async with ToolClient.from_config() as tools:    # start() + connected(): fails fast
        ...

Each server is connected, listed and checked against its contracts
(accord.protocol.mcp.contract_check) once, and again only after a reconnect; a departure is one
CONTRACT_VIOLATION before a single tool of that server runs. Sessions and their state are
accord.protocol.mcp.connection; readiness (:meth:`ToolClient.ready`) reads that state. `call`:

- refuses a write tool (``contract.is_write``) without an idempotency key, and arguments
  outside the input schema, with INVALID_INPUT before anything is sent;
- carries ``traceparent`` in ``params._meta`` (SEP-414): the context of its own
  ``execute_tool {tool}`` CLIENT span, under the caller's active span or ``traceparent=``;
- carries the delegation it acts under (``acting_for=``: the tenant, and the approver of an
  approved write) in ``params._meta[TOOL_DELEGATION_META_KEY]``, set by the caller's runtime;
- returns the structured output after validating it against the contract's output schema
  (CONTRACT_VIOLATION otherwise), or raises the contract error the server put in ``_meta``;
- retries by the error's retry class (accord.contracts.retry.decide), each attempt under a
  timeout (RETRYABLE_TIMEOUT): a short blip (``max_attempts`` calls). A workflow node that
  must ride out a longer outage retries on top, with durable backoff until the request's
  deadline (the workflow runtime's node retries);
- shares one circuit breaker per server with every caller in the process
  (:mod:`accord.protocol.breaker`): a server known to be down is not called until its
  cool-down passes (the call fails at once with UNAVAILABLE, which callers back off on);
- tells its observers (:meth:`ToolClient.observe`) when it starts and ends (the Runner's
  event stream).

Over HTTP every request carries the client's one credential (accord.protocol.mcp.credentials:
a service's own token granting the tools of its configuration, or a person's), and only to the
origin of the URL each server was configured with.

Library failures become contract errors at one boundary: :func:`map_exception` for exceptions
and :class:`_BoundaryTransport` for HTTP (connection refused, 5xx, timeouts), which answers a
failed POST with a JSON-RPC error carrying the contract code so that the SDK's session survives
and the caller reads the same error type either way.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Final, cast

import anyio
import httpx2
import mcp_types as types
from jsonschema.exceptions import best_match
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND, REQUEST_TIMEOUT
from opentelemetry.trace import SpanKind
from pydantic import ValidationError

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import SENT_DETAIL_KEY, TRACEPARENT_KEY
from accord.contracts.retry import Action, RetryPolicy, decide
from accord.contracts.tool_access import ToolDelegation
from accord.contracts.tools import IDEMPOTENCY_FIELD, ToolContract
from accord.contracts.validation import schema_path
from accord.protocol import telemetry
from accord.protocol.breaker import breaker
from accord.protocol.in_process import InProcessServers
from accord.protocol.mcp.config import DEFAULT_TIMEOUT_S, ServerSpec, ToolsConfig, load_config
from accord.protocol.mcp.connection import Lose, ServerConnection, ServerState, ServerStatus
from accord.protocol.mcp.credentials import OriginAuth, ServiceCredential, ToolCredential
from accord.protocol.schema_check import CompiledSchema
from accord.protocol.sent import as_last_of, marked, never_sent
from accord.protocol.telemetry import instruments, spans

__all__ = [
    "ServerState",
    "ServerStatus",
    "ToolCallEvent",
    "ToolClient",
    "ToolObserver",
    "list_server_tools",
    "map_exception",
]

_HTTP_LIMITS: Final = httpx2.Limits(max_connections=100, max_keepalive_connections=20)
# A JSON-RPC error this process wrote itself (the boundary transport's answer for a request that
# failed below MCP) carries this proof in its details; a server's cannot, so a server's claim
# that its own answer was never sent (``details.sent: false``) is read without it.
_LOCAL_PROOF: Final = secrets.token_hex(16)
_PROOF_KEY: Final = "accord.answered_here"


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
        return _trusted(
            AccordError.from_jsonrpc_error(
                {"code": leaf.code, "message": leaf.message, "data": leaf.data}
            )
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


def _trusted(error: AccordError) -> AccordError:
    """A JSON-RPC error as read: this process's own answer keeps ``sent``, a server's loses it
    (a server that answered was sent to, whatever it says)."""
    proof = error.details.get(_PROOF_KEY)
    if proof is None:
        return marked(error, None)
    details = {k: v for k, v in error.details.items() if k != _PROOF_KEY}
    read = AccordError(error.code, error.message, details)
    return read if proof == _LOCAL_PROOF else marked(read, None)


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


def _not_sent(exc: Exception) -> dict[str, bool]:
    """``{"sent": False}`` when no connection was made: not one byte of the request left."""
    unsent = isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout)
    return {SENT_DETAIL_KEY: False} if unsent else {}


class _BoundaryTransport(httpx2.AsyncBaseTransport):
    """Answers a JSON-RPC POST that failed below MCP with a JSON-RPC error in contract form.

    The SDK would otherwise tear the whole session down on a refused connection and report
    every HTTP error status as the same INTERNAL_ERROR. 404 passes through untouched: the SDK
    reads it as "method not found" while negotiating the protocol version with older servers.
    """

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        server: str,
        *,
        on_unreachable: Callable[[AccordError], None] | None = None,
    ) -> None:
        self._inner = inner
        self._server = server
        self._on_unreachable = on_unreachable  # the server is gone: its session is replaced

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TimeoutException as exc:
            return self._answer(
                request,
                AccordError(
                    ErrorCode.RETRYABLE_TIMEOUT,
                    f"tool server {self._server!r} did not answer in time",
                    {"server": self._server, **_not_sent(exc)},
                ),
            )
        except httpx2.TransportError as exc:
            unreachable = AccordError(
                ErrorCode.UNAVAILABLE,
                f"tool server {self._server!r} is unreachable",
                {"server": self._server, "cause": type(exc).__name__, **_not_sent(exc)},
            )
            if self._on_unreachable is not None:
                self._on_unreachable(unreachable)
            return self._answer(request, unreachable)
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
        proven = AccordError(error.code, error.message, {**error.details, _PROOF_KEY: _LOCAL_PROOF})
        payload = {"jsonrpc": "2.0", "id": sent["id"], "error": proven.to_jsonrpc_error()}
        return httpx2.Response(200, json=payload, request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_jsonrpc(body: bytes) -> bool:
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    return isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0"


# -- one server: its transport and how its failures read -----------------------------------
async def _open_transport(
    spec: ServerSpec,
    credential: ToolCredential | None,
    in_process: InProcessServers | None,
    stack: AsyncExitStack,
    lose: Lose,
) -> Any:
    if spec.transport == "stdio":
        assert spec.command is not None
        return StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
        )
    assert spec.url is not None
    # A server this client was told is served in this process is reached without a socket.
    found = in_process.transport(spec.url) if in_process is not None else None
    inner = found or httpx2.AsyncHTTPTransport(limits=_HTTP_LIMITS)
    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(30.0, read=300.0),
        transport=_BoundaryTransport(inner, spec.name, on_unreachable=lose),
        auth=OriginAuth(credential, spec.url) if credential is not None else None,
    )
    await stack.enter_async_context(http)
    return streamable_http_client(spec.url, http_client=http)


def _session_error(spec: ServerSpec, exc: BaseException, connected: bool) -> AccordError:
    leaf = _first_leaf(exc)
    if not connected and isinstance(leaf, MCPError) and leaf.code == METHOD_NOT_FOUND:
        # The HTTP transport's spelling of a 404: nothing speaks MCP at this address.
        return AccordError(
            ErrorCode.NOT_FOUND,
            f"no MCP server at {spec.target} ({spec.name})",
            {"server": spec.name},
        )
    return map_exception(exc, spec.name)


# -- calls, as the client's observers see them -----------------------------------------------
@dataclass(frozen=True)
class ToolCallEvent:
    """One tool call starting (``ended`` False) or ending, with its result or its error.

    ``arguments`` are the caller's, with the idempotency key in ``idempotency_key`` when one
    was given; ``call_id`` pairs the start with the end.
    """

    call_id: str
    tool: str
    arguments: dict[str, Any]
    ended: bool = False
    result: dict[str, Any] | None = None
    error: AccordError | None = None


# Called in the caller's task (its context variables apply), before and after every call; it
# must not raise or block.
ToolObserver = Callable[[ToolCallEvent], None]


# -- the client ----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Route:
    """One contracted tool: its server, and its schemas compiled once, checked as the server
    checks them (:mod:`accord.protocol.schema_check`)."""

    connection: ServerConnection
    contract: ToolContract
    inputs: CompiledSchema
    outputs: CompiledSchema
    timeout_s: float


class ToolClient:
    """Calls contracted tools on the configured MCP servers; one per process, see the module
    docstring for its lifecycle."""

    def __init__(
        self,
        servers: Sequence[ServerSpec],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        connect_timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        credential: ToolCredential | None = None,
        in_process: InProcessServers | None = None,
    ) -> None:
        names = [s.name for s in servers]
        if len(set(names)) != len(names):
            raise AccordError(ErrorCode.INVALID_INPUT, "tool server names must be unique")
        self._specs = tuple(servers)
        self._timeout_s = timeout_s
        self._retry = retry or RetryPolicy()
        self._connections = {
            spec.name: ServerConnection(
                spec,
                connect_timeout_s=connect_timeout_s,
                open_transport=partial(_open_transport, spec, credential, in_process),
                to_error=partial(_session_error, spec),
            )
            for spec in servers
        }
        self._routes = {
            contract.name: _Route(
                self._connections[spec.name],
                contract,
                CompiledSchema(contract.input_schema),
                CompiledSchema(contract.output_schema),
                spec.timeout_s or timeout_s,
            )
            for spec in servers
            for contract in spec.contracts
        }
        self._observers: list[ToolObserver] = []
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._closed = False

    @classmethod
    def from_config(
        cls,
        path: Path | str | None = None,
        config: ToolsConfig | None = None,
        *,
        default: Path | None = None,
        service: str | None = None,
        grants: Sequence[str] | None = None,
        credential: ToolCredential | None = None,
        in_process: InProcessServers | None = None,
    ) -> ToolClient:
        """A client for the configured servers (explicit path, ACCORD_TOOLS_CONFIG, else the
        application's ``default`` file).

        ``service``: present that service's own token, granting ``grants`` (default: every tool
        the configuration names); or pass a ``credential`` (a person's, the CLI's).
        ``in_process``: the servers of this process it reaches without a socket (the
        in-process Runner's, accord.protocol.in_process); none by default.
        """
        cfg = config or load_config(path, default=default)
        if credential is None and service is not None:
            named = [c.name for s in cfg.servers for c in s.contracts]
            credential = ServiceCredential(service, named if grants is None else grants)
        return cls(
            cfg.servers,
            timeout_s=cfg.timeout_s,
            connect_timeout_s=cfg.connect_timeout_s,
            retry=cfg.retry,
            credential=credential,
            in_process=in_process,
        )

    @classmethod
    def for_servers(cls, servers: Sequence[ServerSpec], **options: Any) -> ToolClient:
        """A client for servers given in code (tests, embedding)."""
        return cls(servers, **options)

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        """Start connecting to every server, in the background; returns at once.

        Sessions live in the client's own task group, owned by one task of the client's, so
        that start() and aclose() may be called from different tasks (a Runner opened by one
        request and closed by another). A server that is down does not stop the start: calls
        to it fail with its contract error and it is retried in the background.
        """
        if self._owner is not None or self._closed:
            raise AccordError(ErrorCode.INVALID_INPUT, "a ToolClient is started once")
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A fresh context: the owner outlives the request (and its trace) that started it.
        self._owner = asyncio.create_task(
            self._own(started), name="mcp-tool-client", context=contextvars.Context()
        )
        await asyncio.shield(started)

    async def _own(self, started: asyncio.Future[None]) -> None:
        try:
            async with anyio.create_task_group() as tg:
                for conn in self._connections.values():
                    conn.attach(tg)
                    tg.start_soon(conn.supervise)
                started.set_result(None)
                await self._stop.wait()
                tg.cancel_scope.cancel()
        finally:
            for conn in self._connections.values():
                conn.close()
            if not started.done():
                started.set_exception(AccordError(ErrorCode.INTERNAL, "the tool client failed"))

    async def connected(self) -> None:
        """Wait for every server's first connection attempt; raise the first failure (in
        configuration order): UNAVAILABLE, RETRYABLE_TIMEOUT, NOT_FOUND, CONTRACT_VIOLATION."""
        if self._owner is None:
            raise AccordError(ErrorCode.INVALID_INPUT, "start() the ToolClient first")
        for conn in self._connections.values():
            await conn.settled()
        for status in self.statuses():
            if not status.ready:
                raise status.error or AccordError(
                    ErrorCode.UNAVAILABLE,
                    f"tool server {status.server!r} is {status.state.value}",
                    {"server": status.server},
                )

    async def aclose(self) -> None:
        """End every session and the client's task group. Calls after this are UNAVAILABLE."""
        self._closed = True
        self._stop.set()
        owner, self._owner = self._owner, None
        if owner is not None:
            await owner

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """``start()`` on enter, ``aclose()`` on exit, not waiting for the servers (a service's
        lifespan: it must come up while a tool server is still down)."""
        await self.start()
        try:
            yield
        finally:
            await self.aclose()

    async def __aenter__(self) -> ToolClient:
        """``start()`` and ``connected()``: every server connected and checked, or the error."""
        await self.start()
        try:
            await self.connected()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def observe(self, observer: ToolObserver) -> Callable[[], None]:
        """Call ``observer`` before and after every tool call; returns the unsubscribe."""
        self._observers.append(observer)

        def unsubscribe() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return unsubscribe

    # -- facts ------------------------------------------------------------------------------
    @property
    def contracts(self) -> dict[str, ToolContract]:
        """Every callable tool's contract, by tool name."""
        return {name: route.contract for name, route in self._routes.items()}

    def listed(self, server: str) -> list[types.Tool]:
        """What ``server`` listed when it was last (re)connected, contracted or not."""
        return self._connections[server].tools

    def statuses(self) -> list[ServerStatus]:
        """Every server's state, in configuration order (no I/O)."""
        return [conn.status() for conn in self._connections.values()]

    async def ready(self, *tools: str, wait_s: float = 0.0) -> bool:
        """Whether the servers of ``tools`` (default: every server) are connected and checked.

        No I/O of its own: it reads the connections' state, waiting up to ``wait_s`` for an
        attempt already in flight (a service asked for readiness just after it started).
        """
        conns = [
            conn
            for conn in self._connections.values()
            if not tools or any(c.name in tools for c in conn.spec.contracts)
        ]
        if wait_s > 0:
            with anyio.move_on_after(wait_s):
                for conn in conns:
                    await conn.settled()
        return bool(conns) and all(conn.status().ready for conn in conns)

    # -- calls ------------------------------------------------------------------------------
    async def call(
        self,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        traceparent: str | None = None,
        idempotency_key: str | None = None,
        timeout_s: float | None = None,
        acting_for: ToolDelegation | None = None,
    ) -> dict[str, Any]:
        """Call a contracted tool; its validated structured output, or a contract AccordError.

        ``acting_for``: the delegation this call is made under (the customer's tenant, and the
        approver of an approved write), sent in ``params._meta``; the server takes the customer
        and the approver from it (a service's call about a customer needs one).
        """
        if not self._observers:
            return await self._call(
                tool_name, arguments, traceparent, idempotency_key, timeout_s, acting_for
            )
        args = dict(arguments)
        if idempotency_key is not None:
            args.setdefault(IDEMPOTENCY_FIELD, idempotency_key)
        started = ToolCallEvent(uuid.uuid4().hex, tool_name, args)
        self._notify(started)
        try:
            result = await self._call(
                tool_name, arguments, traceparent, idempotency_key, timeout_s, acting_for
            )
        except AccordError as error:
            self._notify(replace(started, ended=True, error=error))
            raise
        self._notify(replace(started, ended=True, result=result))
        return result

    def _notify(self, event: ToolCallEvent) -> None:
        for observer in list(self._observers):
            observer(event)

    async def _call(
        self,
        tool_name: str,
        arguments: Mapping[str, Any],
        traceparent: str | None,
        idempotency_key: str | None,
        timeout_s: float | None,
        acting_for: ToolDelegation | None = None,
    ) -> dict[str, Any]:
        route = self._routes.get(tool_name)
        if route is None:
            raise AccordError(
                ErrorCode.NOT_FOUND,
                f"no configured tool server offers {tool_name!r}",
                {"tool": tool_name},
            )
        args = _prepare(route, arguments, idempotency_key)
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
            sent: dict[str, Any] = acting_for.to_meta() if acting_for is not None else {}
            if trace:
                sent[TRACEPARENT_KEY] = trace
            meta = cast(types.RequestParamsMeta, sent) if sent else None
            attempt = 1
            spec = route.connection.spec
            shared = breaker(f"mcp:{spec.name}", spec.url or spec.command or "")
            reached = False  # may an attempt have reached the server (and done the work)?
            try:
                while True:
                    try:
                        refused = shared.refuse()  # the server is known down: do not call it
                        if refused is not None:
                            raise refused
                        try:
                            answer = await self._attempt(
                                route, args, meta, timeout_s or route.timeout_s
                            )
                        except AccordError as failed:
                            shared.record(failed)
                            raise
                        shared.record(None)
                        return answer
                    except AccordError as err:
                        earlier, reached = reached, reached or not never_sent(err)
                        elapsed_ms = int((time.monotonic() - started) * 1000)
                        decision = decide(err.code, attempt, elapsed_ms, self._retry)
                        if decision.action is not Action.RETRY or self._closed:
                            last = as_last_of(err, earlier)
                            if last is not err:  # an earlier attempt may have been done
                                raise last from None
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
        sending = False  # until the tools/call request is handed to the session
        try:
            with anyio.fail_after(timeout_s):
                session = await route.connection.session()
                sending = True
                request = types.CallToolRequest(
                    params=types.CallToolRequestParams(name=name, arguments=args, _meta=meta)
                )
                # send_request, not session.call_tool: the SDK would check the output against
                # the schema the server advertises; we check it against the contract below.
                result = await session.send_request(
                    request, types.CallToolResult, request_read_timeout_seconds=timeout_s
                )
        except AccordError as refused:
            if not sending:  # no session to send on: connecting or checking the server failed
                raise marked(refused, False) from None
            raise
        except Exception as exc:
            failure = map_exception(exc, server)
            if not sending:
                failure = marked(failure, False)
            if session is not None and _session_broken(exc):
                # The next attempt connects (and checks) afresh.
                route.connection.discard(session, failure)
            raise failure from None
        if result.is_error:
            # The server answered: it was sent, whatever its error's details claim.
            answered = AccordError.from_mcp_result(result.model_dump(by_alias=True, mode="json"))
            raise marked(answered, None)
        output = result.structured_content
        if not isinstance(output, dict):
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                f"tool {name!r} returned no structured output",
                {"server": server, "tool": name},
            )
        error = (
            None
            if route.outputs.is_valid(output)
            else best_match(route.outputs.iter_errors(output))
        )
        if error is not None:
            where = schema_path(error, pointer=True)
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION,
                f"tool {name!r} returned output outside its contract at {where}: "
                f"{error.message[:300]}",
                {"server": server, "tool": name, "where": where, "rule": str(error.validator)},
            )
        return output


def _prepare(
    route: _Route, arguments: Mapping[str, Any], idempotency_key: str | None
) -> dict[str, Any]:
    """Arguments ready to send, or INVALID_INPUT before anything leaves this process."""
    contract = route.contract
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
    error = None if route.inputs.is_valid(args) else best_match(route.inputs.iter_errors(args))
    if error is not None:
        where = schema_path(error, pointer=True)
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"arguments of {contract.name} break its input schema at {where}: "
            f"{error.message[:300]}",
            {"tool": contract.name, "where": where, "rule": str(error.validator)},
        )
    return args


async def list_server_tools(
    spec: ServerSpec,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    credential: ToolCredential | None = None,
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
    async with ToolClient([bare], connect_timeout_s=timeout_s, credential=credential) as client:
        return client.listed(spec.name)
