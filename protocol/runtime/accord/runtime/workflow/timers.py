"""Durable timers: rows in the log's database, one scheduler loop per process.

The loop sleeps until the earliest due timer of ANY workflow, fires what is due, and looks
again; with no timer at all it sleeps until woken. It never polls: what can bring an earlier
timer wakes it. A timer set in this process wakes it at once (`timer_set`); one set by another
process (a replica, maybe dead since) is found by `look_again`, which the lease keeper calls on
each heartbeat, a wake-up the process has anyway. So 10,000 workflows waiting for a person
cost one sleeping task here, and no wake-up until the first of their deadlines. The rescan
delay (``rescan_s``) is only how soon to try again a due timer that could not fire here, or
after the log failed. Due times and sleeps are on the runtime's clock (`clock.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable

from accord.contracts.errors import AccordError
from accord.runtime.workflow.clock import Clock
from accord.runtime.workflow.eventlog import EventLog
from accord.runtime.workflow.events import Timer

logger = logging.getLogger(__name__)


class TimerScheduler:
    def __init__(
        self,
        log: EventLog,
        fire: Callable[[Timer], Awaitable[bool]],
        clock: Clock,
        *,
        rescan_s: float = 5.0,
    ) -> None:
        self._log = log
        self._fire = fire
        self._clock = clock
        self._rescan_s = rescan_s
        self._wake = asyncio.Event()
        self._sleeping_until = math.inf

    def timer_set(self, due_at: float) -> None:
        """A timer was set in this process: wake up if it is due before our next look."""
        if due_at < self._sleeping_until:
            self._wake.set()

    def look_again(self) -> None:
        """Look in the log once more: another process may have set an earlier timer."""
        self._wake.set()

    async def run(self) -> None:
        while True:
            self._wake.clear()
            try:
                wake_at = await self._fire_due()
            except AccordError:
                logger.warning("timer scheduler: event log unavailable")
                wake_at = self._clock.now() + self._rescan_s
            self._sleeping_until = wake_at
            if wake_at == math.inf:  # no timer anywhere: nothing to wait for but a wake-up
                await self._wake.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    async with self._clock.timeout_at(wake_at):
                        await self._wake.wait()
            self._sleeping_until = math.inf

    async def _fire_due(self) -> float:
        """Fire due timers; return when to look again (inf: when woken)."""
        while True:
            now = self._clock.now()
            due = await self._log.due_timers(now, 100)
            if not due:
                break
            fired_any = False
            for timer in due:
                try:
                    fired_any |= await self._fire(timer)
                except AccordError as error:
                    logger.info(
                        "timer %s of %s not fired now: %s",
                        timer.timer_id,
                        timer.workflow_id,
                        error.code.value,
                    )
            if not fired_any:
                return now + self._rescan_s  # owned elsewhere or not runnable here: look later
        upcoming = await self._log.next_timer()
        return math.inf if upcoming is None else upcoming.due_at
