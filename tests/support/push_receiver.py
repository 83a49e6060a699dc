"""A push notification receiver in the test's event loop (accord's own receiver app under a
real uvicorn server on 127.0.0.1): tests wait on its asyncio condition with a deadline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import uvicorn
from starlette.types import ASGIApp

from accord.protocol.push.receiver import Notification, build_receiver_app

TOKEN = "push-test-token-0123456789abcdef"


@dataclass
class Receiver:
    port: int
    token: str = TOKEN
    received: list[Notification] = field(default_factory=list)
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def record(self, note: Notification) -> None:
        self.received.append(note)

        async def tell() -> None:
            async with self._changed:
                self._changed.notify_all()

        asyncio.get_running_loop().create_task(tell())

    def states(self, task_id: str) -> list[str]:
        return [n.state for n in self.received if n.task_id == task_id]

    async def wait_for(self, task_id: str, state: str, deadline_s: float = 60.0) -> Notification:
        """The first notification of ``task_id`` in ``state``, pushed within the deadline."""

        def found() -> Notification | None:
            return next(
                (n for n in self.received if n.task_id == task_id and n.state == state), None
            )

        async with asyncio.timeout(deadline_s), self._changed:
            await self._changed.wait_for(lambda: found() is not None)
        note = found()
        assert note is not None
        return note


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, port: int, deadline_s: float = 10.0) -> AsyncIterator[None]:
    """``app`` under a real uvicorn server on 127.0.0.1:``port`` in this event loop."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    end = asyncio.get_running_loop().time() + deadline_s
    while not server.started:  # uvicorn's own flag: it has no event to wait on
        if asyncio.get_running_loop().time() > end or task.done():
            raise TimeoutError(f"no server listening on port {port}")
        await asyncio.sleep(0.01)  # bounded by the deadline
    try:
        yield
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def running_receiver(port: int, token: str = TOKEN) -> AsyncIterator[Receiver]:
    receiver = Receiver(port, token)
    async with serving(build_receiver_app(token, receiver.record), port):
        yield receiver
