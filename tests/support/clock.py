"""A clock that moves only when the test says so, for the workflow runtime (`Runtime(clock=)`).

    clock = ManualClock()
    runtime = Runtime(url, clock=clock)
    ...                                  # the workflow waits on a 60 s approval timer
    await clock.advance(61)              # the timer is due: the scheduler fires it now

`advance` runs every callback that came due, earliest first, with the clock at its due time;
what they wake (a node, the timer scheduler) then runs on the event loop as usual, so a test
waits for the outcome as an event, with a real-time deadline. Nothing sleeps.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from accord.runtime.workflow import Clock


@dataclass(order=True)
class _Call:
    when: float
    seq: int
    callback: Callable[[], object] = field(compare=False)
    canceled: bool = field(default=False, compare=False)
    changed: Callable[[], None] | None = field(default=None, compare=False)

    def cancel(self) -> None:
        self.canceled = True
        if self.changed is not None:
            self.changed()


class ManualClock(Clock):
    def __init__(self, start: float | None = None) -> None:
        # Near the real time by default: due times in the log look like real ones.
        self._now = time.time() if start is None else start
        self._calls: list[_Call] = []
        self._seq = itertools.count()
        self._changed = asyncio.Event()  # set whenever a call is added or canceled

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[], object]) -> _Call:
        call = _Call(when, next(self._seq), callback, changed=self._changed.set)
        self._changed.set()
        if when <= self._now:
            asyncio.get_running_loop().call_soon(self._run, call)
        else:
            heapq.heappush(self._calls, call)
        return call

    @property
    def waiting(self) -> int:
        """How many calls wait for the clock to move."""
        return sum(1 for call in self._calls if not call.canceled)

    def next_due(self) -> float | None:
        """When the earliest waiting call is due."""
        due = [call.when for call in self._calls if not call.canceled]
        return min(due) if due else None

    async def until(self, condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
        """Wait until ``condition()`` holds, looking again each time a call is added or
        canceled (what sleeps on the clock changed); ``timeout_s`` is a real-time bound."""
        async with asyncio.timeout(timeout_s):
            while not condition():
                self._changed.clear()
                await self._changed.wait()

    async def advance(self, seconds: float) -> None:
        """Move the clock on by ``seconds`` and run what came due."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        target = self._now + seconds
        while self._calls and self._calls[0].when <= target:
            call = heapq.heappop(self._calls)
            self._now = max(self._now, call.when)
            self._run(call)
        self._now = target
        await asyncio.sleep(0)  # let the woken tasks take their first step

    def jump(self, seconds: float) -> None:
        """Move the clock on by ``seconds`` and run nothing: what came due has not run yet (a
        scheduler that looks later, a replica that set the timer). The next ``advance`` runs
        it."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        self._now += seconds

    def _run(self, call: _Call) -> None:
        if not call.canceled:
            call.canceled = True  # once only
            call.callback()
