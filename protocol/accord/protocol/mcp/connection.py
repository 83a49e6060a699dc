"""One tool server's session: connected, listed and contract-checked once, kept, replaced.

A :class:`ServerConnection` belongs to one :class:`~accord.protocol.mcp.client.ToolClient` and
runs in the client's task group:

- :meth:`~ServerConnection.session` returns the current checked session, or opens one
  (connect, ``tools/list``, the contract check) under a lock; a caller that arrives while an
  attempt is in flight shares that attempt's outcome instead of starting another;
- :meth:`~ServerConnection.supervise` keeps the server connected while the client runs: it
  connects at start and, whenever an attempt fails or the session is lost, tries again with
  backoff (``RECONNECT_FIRST_S`` doubling to ``RECONNECT_MAX_S``), so that readiness recovers
  without waiting for a caller (a pod that is not ready gets no traffic that would reconnect it);
- :meth:`~ServerConnection.status` reads the state and never does I/O (``/readyz``).

A session is lost when its task ends (a stdio server exited) or when the client finds the
server gone (:meth:`~ServerConnection.lose`: a refused connection). A server that comes back
may be another version, so it is listed and checked again before its tools are called.

The transport and the error mapping are the client's (the boundary lives in client.py); this
module only keeps sessions and their state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.mcp.config import ServerSpec
from accord.protocol.mcp.contract_check import check_tools, check_versions, violation

RECONNECT_FIRST_S: Final = 0.5
RECONNECT_MAX_S: Final = 10.0
_LIST_PAGE_CAP: Final = 50

Lose = Callable[[AccordError], None]
# (stack, lose) -> what mcp.Client takes: a transport whose failures to reach the server call
# ``lose`` (so the session is replaced and re-checked once the server is back).
OpenTransport = Callable[[AsyncExitStack, Lose], Awaitable[Any]]
# (exception, whether the session was up) -> the contract error for it.
ToError = Callable[[BaseException, bool], AccordError]


class ServerState(StrEnum):
    CONNECTING = "connecting"  # an attempt is in flight (the first one, or a reconnect)
    READY = "ready"  # connected, tools listed, contract checked
    DOWN = "down"  # the last attempt failed or the session was lost; reconnecting
    CLOSED = "closed"  # the client was closed


@dataclass(frozen=True)
class ServerStatus:
    """What a client knows about one server, without asking it."""

    server: str
    state: ServerState
    error: AccordError | None = None  # why it is down
    connects: int = 0  # sessions opened so far, each one connect + tools/list + contract check
    # The MCP revision the current session speaks: 2026-07-28 when the server answers
    # server/discover, else what initialize agreed (None before the first session).
    protocol: str | None = None

    @property
    def ready(self) -> bool:
        return self.state is ServerState.READY


@dataclass
class _Live:
    """One live SDK session and the task that owns it."""

    ready: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)
    lost: anyio.Event = field(default_factory=anyio.Event)  # closed for new calls
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    session: ClientSession | None = None
    tools: list[types.Tool] = field(default_factory=list)
    protocol: str | None = None
    error: AccordError | None = None
    closed: bool = False

    @property
    def usable(self) -> bool:
        return self.session is not None and not self.closed


class ServerConnection:
    """Keeps one checked session to one server; see the module docstring."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        connect_timeout_s: float,
        open_transport: OpenTransport,
        to_error: ToError,
    ) -> None:
        self.spec = spec
        self._connect_timeout_s = connect_timeout_s
        self._open_transport = open_transport
        self._to_error = to_error
        self._tg: anyio.abc.TaskGroup | None = None
        self._live: _Live | None = None
        self._lock = anyio.Lock()
        self._state = ServerState.CONNECTING
        self._error: AccordError | None = None
        self._connects = 0
        self._attempts = 0
        self._settled = anyio.Event()  # set whenever no attempt is in flight

    # -- state ------------------------------------------------------------------------------
    @property
    def tools(self) -> list[types.Tool]:
        return self._live.tools if self._live else []

    def status(self) -> ServerStatus:
        protocol = self._live.protocol if self._live is not None else None
        return ServerStatus(self.spec.name, self._state, self._error, self._connects, protocol)

    async def settled(self) -> None:
        """Wait until no connection attempt is in flight."""
        await self._settled.wait()

    def _set(self, state: ServerState, error: AccordError | None = None) -> None:
        if self._state is ServerState.CLOSED:
            return
        if state is ServerState.CONNECTING:
            if self._settled.is_set():
                self._settled = anyio.Event()
        else:
            self._settled.set()
        self._state, self._error = state, error

    # -- lifecycle --------------------------------------------------------------------------
    def attach(self, task_group: anyio.abc.TaskGroup) -> None:
        """Run sessions in ``task_group`` (the client's, entered by its owner task)."""
        self._tg = task_group

    async def supervise(self) -> None:
        """Connect now, and again with backoff whenever the server is down, until cancelled."""
        delay = RECONNECT_FIRST_S
        while True:
            try:
                live = await self._ensure()
            except AccordError:
                await anyio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_S)
                continue
            began = anyio.current_time()
            await live.lost.wait()
            if anyio.current_time() - began >= RECONNECT_MAX_S:
                delay = RECONNECT_FIRST_S  # it lived: this loss is news, not a crash loop
            await anyio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)

    def close(self) -> None:
        self._set(ServerState.CLOSED)
        if self._live is not None:
            self._live.stop.set()

    # -- sessions ---------------------------------------------------------------------------
    async def session(self) -> ClientSession:
        live = await self._ensure()
        assert live.session is not None
        return live.session

    async def _ensure(self) -> _Live:
        live = self._live
        if live is not None and live.usable:
            return live
        seen = self._attempts
        async with self._lock:
            live = self._live
            if live is not None and live.usable:
                return live
            if self._attempts != seen and self._error is not None:
                raise self._error  # the attempt this caller waited for failed: share it
            return await self._open()

    async def _open(self) -> _Live:
        if self._state is ServerState.CLOSED or self._tg is None:
            raise AccordError(
                ErrorCode.UNAVAILABLE,
                f"the tool client for {self.spec.name!r} is not running",
                {"server": self.spec.name},
            )
        self._attempts += 1
        self._set(ServerState.CONNECTING, self._error)
        if self._live is not None:
            self._live.stop.set()  # a lost session still open ends now: calls on it failed
        try:
            live = await self._connect(self._tg)
        except AccordError as err:
            self._set(ServerState.DOWN, err)
            raise
        except BaseException:  # cancelled: whoever comes next tries again
            self._set(ServerState.DOWN, self._error)
            raise
        self._live = live
        self._connects += 1
        self._set(ServerState.READY)
        return live

    async def _connect(self, tg: anyio.abc.TaskGroup) -> _Live:
        live = _Live()
        tg.start_soon(self._run, live)
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
        try:
            # Versions first: a tool of another major differs in its schemas too, and "serves
            # 2.0.0, built against 1.1.0" says why.
            check_versions(self.spec.name, live.tools, self.spec.contracts)
            findings = check_tools(self.spec.name, live.tools, self.spec.contracts)
            if findings:
                raise violation(self.spec.name, findings)
        except AccordError:
            live.closed = True
            live.lost.set()
            live.stop.set()
            raise
        return live

    async def _run(self, live: _Live) -> None:
        with live.scope:
            try:
                async with AsyncExitStack() as stack:
                    transport = await self._open_transport(stack, lambda e: self._lose(live, e))
                    client = Client(transport, cache=None)
                    await stack.enter_async_context(client)
                    live.protocol = client.protocol_version
                    live.tools = await _list_all(client.session)
                    live.session = client.session
                    live.ready.set()
                    await live.stop.wait()
            except Exception as exc:  # the boundary: whatever ended this session, as a contract
                live.error = self._to_error(exc, live.session is not None)
            finally:
                self._lose(live, live.error or _ended(self.spec.name))
                live.ready.set()

    def discard(self, session: ClientSession, error: AccordError) -> None:
        """Give up ``session`` if it is still current; the next `session()` opens a new one."""
        live = self._live
        if live is not None and live.session is session:
            self._lose(live, error)

    def _lose(self, live: _Live, error: AccordError) -> None:
        """No new call uses ``live``. Calls in flight on it finish (the transport answers them
        with ``error``); the session itself ends when the next one opens, or at close."""
        if live.closed:
            return
        live.closed = True
        live.error = live.error or error
        live.lost.set()
        if self._live is live and self._state is ServerState.READY:
            self._set(ServerState.DOWN, error)


def _ended(server: str) -> AccordError:
    return AccordError(
        ErrorCode.UNAVAILABLE, f"the session to tool server {server!r} ended", {"server": server}
    )


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
