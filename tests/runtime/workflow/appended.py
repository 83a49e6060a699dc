"""The events a runtime appends, as they come: a test waits for the next one of a kind."""

from __future__ import annotations

import asyncio

from accord.runtime.workflow import EventType, LogEvent, Runtime


class Appended:
    def __init__(self, runtime: Runtime) -> None:
        self._queue: asyncio.Queue[LogEvent] = asyncio.Queue()
        runtime.subscribe(self._queue.put)

    async def next(self, kind: EventType, timeout_s: float = 10.0) -> LogEvent:
        """The next appended event of ``kind`` (earlier ones of other kinds are skipped);
        ``timeout_s`` is a real-time bound, whatever clock the runtime has."""
        async with asyncio.timeout(timeout_s):
            while True:
                event = await self._queue.get()
                if event.type is kind:
                    return event
