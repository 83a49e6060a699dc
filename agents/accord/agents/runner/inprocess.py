"""The mesh inside this process: the real services' ASGI apps, reached without a socket.

``InProcessMesh`` builds policy-check, risk-check and the commerce and payments tool servers
from their entry points (``accord.services``: nothing here imports ``accord.tools``), runs
their lifespans, and serves each one at its configured URL (``service_url(name)``) inside this
process:

- A2A: the Runner's agent client sends through :meth:`InProcessMesh.transport`, an httpx
  transport that hands requests for those origins to ``httpx.ASGITransport`` (anything else
  goes to the network as usual);
- MCP: each tool server is served in :attr:`InProcessMesh.servers`
  (:class:`accord.protocol.in_process.InProcessServers`), which goes explicitly to every
  ``ToolClient`` that should reach them: the Runner's (``ToolClient(in_process=...)``) and,
  through ``ServeOptions.in_process``, the ones the services build (policy-check's and
  risk-check's own, commerce's to payments, one per service as in their own processes). A
  client nobody gave it, in this process or another, is not rerouted.

Everything above the socket is real: cards, authentication (service tokens signed with this
machine's secret), the delegation envelope, Streamable HTTP, JSON-RPC, the contract check at
connect, the SQLite ledgers. No port is opened.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any, Final

import httpx

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.health import served_name
from accord.protocol.in_process import InProcessServers, origin_of
from accord.protocol.service import ServiceSpec, discover_services
from accord.protocol.settings import ServeOptions, service_url

SERVICES: Final = ("commerce", "payments", "policy", "risk")
PROBE_TIMEOUT_S: Final = 1.0  # loopback health answers in milliseconds; a dead port at once


async def mesh_answers(names: tuple[str, ...] = SERVICES) -> bool:
    """Every service in ``names`` answers ``GET /healthz`` at its configured URL, by name."""
    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as client:

        async def alive(name: str) -> bool:
            try:
                response = await client.get(f"{service_url(name).rstrip('/')}/healthz")
            except httpx.HTTPError:
                return False
            return served_name(response) == name

        return all(await asyncio.gather(*(alive(n) for n in names)))


class Lifespan:
    """Runs an ASGI app's lifespan (startup on enter, shutdown on exit)."""

    def __init__(self, app: Any, name: str) -> None:
        self._app = app
        self._name = name
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Lifespan:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        self._task = asyncio.create_task(
            self._app(scope, self._inbox.get, self._outbox.put), name=f"lifespan:{self._name}"
        )
        await self._inbox.put({"type": "lifespan.startup"})
        await self._expect("lifespan.startup.complete")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inbox.put({"type": "lifespan.shutdown"})
        try:
            await self._expect("lifespan.shutdown.complete")
        finally:
            if self._task is not None:
                await asyncio.gather(self._task, return_exceptions=True)

    async def _expect(self, wanted: str) -> None:
        assert self._task is not None
        getting = asyncio.ensure_future(self._outbox.get())
        await asyncio.wait({getting, self._task}, return_when=asyncio.FIRST_COMPLETED)
        message = getting.result() if getting.done() else None
        if message is None:
            getting.cancel()
        if message is None or message.get("type") != wanted:
            what = "start" if wanted.endswith("startup.complete") else "shut down"
            cause = self._task.exception() if self._task.done() else None
            # lifespan.*.failed carries the app's own account of it (a traceback's last line)
            said = str((message or {}).get("message") or "").strip().splitlines()[-1:]
            raise AccordError(
                ErrorCode.UNAVAILABLE,
                f"the in-process service {self._name!r} did not {what}",
                {"service": self._name, **({"cause": said[0][:300]} if said else {})},
            ) from cause


class _Dispatch(httpx.AsyncBaseTransport):
    """Requests for an in-process origin go to its app; the rest to the network."""

    def __init__(self, apps: dict[str, Any]) -> None:
        self._apps = {origin: httpx.ASGITransport(app) for origin, app in apps.items()}
        self._network = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        inner = self._apps.get(origin_of(str(request.url)))
        if inner is None:
            return await self._network.handle_async_request(request)
        return await inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._network.aclose()


class InProcessMesh:
    """``async with InProcessMesh() as mesh:`` the services run in this process."""

    def __init__(
        self, services: tuple[str, ...] = SERVICES, *, servers: InProcessServers | None = None
    ) -> None:
        self._names = services
        # Shared with whoever gave it (another mesh, a test's own tool server): all reach all.
        self.servers = servers or InProcessServers()
        self._stack: AsyncExitStack | None = None
        self._a2a: dict[str, Any] = {}

    async def __aenter__(self) -> InProcessMesh:
        found = discover_services()
        missing = [name for name in self._names if name not in found]
        if missing:
            raise AccordError(
                ErrorCode.UNAVAILABLE,
                f"services not installed: {', '.join(missing)}",
                {"services": missing},
            )
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            for name in self._names:
                await self._serve(stack, found[name])
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def _serve(self, stack: AsyncExitStack, spec: ServiceSpec) -> None:
        url = service_url(spec.name)
        # The app's own view of its address (card URL, Host allow-list) is its configured one.
        app = spec.build_app(ServeOptions(host=httpx.URL(url).host, in_process=self.servers))
        await stack.enter_async_context(Lifespan(app, spec.name))
        if spec.protocol == "mcp":
            stop: Callable[[], None] = self.servers.serve(url, app)
            stack.callback(stop)
        else:
            self._a2a[origin_of(url)] = app
            stack.callback(self._a2a.pop, origin_of(url), None)

    def transport(self) -> httpx.AsyncBaseTransport:
        """An httpx transport that reaches the in-process agents (A2A)."""
        return _Dispatch(dict(self._a2a))

    async def __aexit__(self, *exc: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
