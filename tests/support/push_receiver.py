"""A push notification receiver in the test's event loop (accord's own receiver app under a
real uvicorn server on 127.0.0.1): tests wait on its asyncio condition with a deadline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import uvicorn

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


async def _listening(server: uvicorn.Server, deadline_s: float = 10.0) -> None:
    """Until uvicorn's own flag says the socket listens (it has no event to wait on)."""
    end = asyncio.get_running_loop().time() + deadline_s
    while not server.started:
        if asyncio.get_running_loop().time() > end:
            raise TimeoutError("the push receiver did not start listening")
        await asyncio.sleep(0.01)  # bounded by the deadline


@contextlib.asynccontextmanager
async def running_receiver(port: int, token: str = TOKEN) -> AsyncIterator[Receiver]:
    receiver = Receiver(port, token)
    app = build_receiver_app(token, receiver.record)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    await _listening(server)
    try:
        yield receiver
    finally:
        server.should_exit = True
        await serving
