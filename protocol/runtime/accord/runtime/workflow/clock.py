"""The runtime's clock: what time it is, and waking up at a time.

Everything in the workflow runtime that depends on time reads this one clock: durable timer
due times, the timer scheduler's sleep, heartbeat scheduling, retry backoff and the retry
deadline, node timeouts and the bound on cancel hooks. The default is the system clock; a
test hands the runtime a clock it moves by hand, so timer, retry and timeout tests advance
time instead of sleeping (tests/support/clock.py).

One time axis: seconds since the epoch. Due times are stored in the database, so they must
mean the same after a restart and on another replica. Waits are given as the absolute time to
wake at (`call_at`, `sleep_until`, `timeout_at`): a caller that read the time, awaited
something, and then started to wait cannot wait too long because time moved in between.

Not here: lease expiry. The event log compares heartbeat expiries with the database's own
clock, the one clock every replica shares; the runtime's clock only decides when to renew.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol


class Cancelable(Protocol):
    """A scheduled call that has not happened yet (an asyncio.TimerHandle is one)."""

    def cancel(self) -> None: ...


class Clock(ABC):
    """Time for the workflow runtime. Subclasses give `now` and `call_at`; the waits follow."""

    @abstractmethod
    def now(self) -> float:
        """Seconds since the epoch."""

    @abstractmethod
    def call_at(self, when: float, callback: Callable[[], object]) -> Cancelable:
        """Call ``callback`` on the running event loop once this clock reaches ``when``
        (soon, if it already has)."""

    async def sleep_until(self, when: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        handle = self.call_at(when, wake)
        try:
            await woken
        finally:
            handle.cancel()

    async def sleep(self, delay_s: float) -> None:
        await self.sleep_until(self.now() + delay_s)

    def timeout_at(self, when: float) -> AbstractAsyncContextManager[object]:
        """Like `asyncio.timeout_at`, at a time on this clock: the body is canceled and
        TimeoutError raised once the clock reaches ``when``."""
        return _timeout_at(self, when)

    def timeout(self, delay_s: float) -> AbstractAsyncContextManager[object]:
        return self.timeout_at(self.now() + delay_s)


@asynccontextmanager
async def _timeout_at(clock: Clock, when: float) -> AsyncIterator[None]:
    # asyncio's own timeout does the cancel and TimeoutError bookkeeping; this clock only
    # says when: at `when` the scope is moved to "now" on the loop's clock.
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(None) as scope:
        handle = clock.call_at(when, lambda: scope.reschedule(loop.time()))
        try:
            yield
        finally:
            handle.cancel()


class SystemClock(Clock):
    """The real time: `time.time()`, waits on the event loop's monotonic clock."""

    def now(self) -> float:
        return time.time()

    def call_at(self, when: float, callback: Callable[[], object]) -> Cancelable:
        return asyncio.get_running_loop().call_later(max(0.0, when - time.time()), callback)

    async def sleep(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s)

    def timeout(self, delay_s: float) -> AbstractAsyncContextManager[object]:
        return asyncio.timeout(delay_s)


SYSTEM_CLOCK = SystemClock()
