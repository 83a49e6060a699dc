"""Leases: who may run a workflow.

Each runtime has an owner id and keeps one heartbeat row alive (renewed every third of the
TTL, on the runtime's clock). A workflow row names the owner that runs it; a running workflow
whose owner's heartbeat expired is an orphan, and `EventLog.claim_orphans` hands each orphan
to exactly one caller (SQLite: the database write lock; PostgreSQL: `FOR UPDATE SKIP
LOCKED`). The optimistic version check on every append is the fence: if a presumed-dead owner
wakes up, its next append conflicts and it stops.

Two clocks, on purpose: the runtime's clock decides WHEN to renew; the event log decides
whether a heartbeat has expired, with the database's clock (every replica reads the same one).
So a test cannot make a lease expire by advancing the runtime's clock: it declares an owner
dead with `EventLog.drop_owner` (what `Runtime.close` does), or waits out a real TTL.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from accord.contracts.errors import AccordError
from accord.runtime.workflow.clock import Clock
from accord.runtime.workflow.eventlog import EventLog

logger = logging.getLogger(__name__)


class LeaseKeeper:
    def __init__(
        self,
        log: EventLog,
        owner: str,
        ttl_s: float,
        clock: Clock,
        after_beat: Callable[[], Awaitable[object]] | None,
    ) -> None:
        self._log = log
        self._owner = owner
        self._ttl_s = ttl_s
        self._clock = clock
        self._after_beat = after_beat  # the runtime's look for orphans and others' timers

    async def beat(self) -> None:
        await self._log.heartbeat(self._owner, self._ttl_s)

    async def run(self) -> None:
        while True:
            await self._clock.sleep(self._ttl_s / 3)
            try:
                await self.beat()
                if self._after_beat is not None:
                    await self._after_beat()
            except AccordError:
                logger.warning("lease keeper: event log unavailable")
