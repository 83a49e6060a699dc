"""Durable timers: rows in the log's database, one scheduler loop per process.

The loop sleeps until the earliest due timer of ANY workflow (or until this process sets an
earlier one), fires what is due, and looks again. It never polls per workflow; a periodic
rescan (default 5 s) only catches timers other processes set, e.g. a dead replica's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable

from accord.agents.workflow.eventlog import EventLog
from accord.agents.workflow.events import Timer
from accord.contracts.errors import AccordError

logger = logging.getLogger(__name__)


class TimerScheduler:
    def __init__(
        self,
        log: EventLog,
        fire: Callable[[Timer], Awaitable[bool]],
        *,
        rescan_s: float = 5.0,
    ) -> None:
        self._log = log
        self._fire = fire
        self._rescan_s = rescan_s
        self._wake = asyncio.Event()
        self._sleeping_until = math.inf

    def timer_set(self, due_at: float) -> None:
        """A timer was set in this process: wake up if it is due before our next look."""
        if due_at < self._sleeping_until:
            self._wake.set()

    async def run(self) -> None:
        while True:
            self._wake.clear()
            try:
                delay = await self._fire_due()
            except AccordError:
                logger.warning("timer scheduler: event log unavailable")
                delay = self._rescan_s
            self._sleeping_until = time.time() + delay
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=delay)
            self._sleeping_until = math.inf

    async def _fire_due(self) -> float:
        """Fire due timers; return how long to sleep."""
        while True:
            now = time.time()
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
                return self._rescan_s  # owned elsewhere or not runnable here: look later
        upcoming = await self._log.next_timer()
        if upcoming is None:
            return self._rescan_s
        return max(0.0, min(upcoming.due_at - time.time(), self._rescan_s))
