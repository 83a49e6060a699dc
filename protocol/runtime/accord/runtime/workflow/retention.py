"""Retention: closed workflows older than the retention period are deleted from the log.

Without it every finished request, refused one and approval stayed forever (a task was kept as
long as the disk lasted). Only closed workflows go (completed, failed, canceled): a workflow
that waits for an approver for a month is still open and stays. This log is not the record of
what a node's calls did: the service called keeps that (under the call's idempotency key), so
deleting an old workflow never makes an effect happen twice.
"""

from __future__ import annotations

import logging
from typing import Final

from accord.contracts.errors import AccordError
from accord.runtime.workflow.clock import Clock
from accord.runtime.workflow.eventlog import EventLog

logger = logging.getLogger(__name__)

BATCH: Final = 500  # workflows per transaction: short write locks, the next batch at once
MAX_INTERVAL_S: Final = 600.0


class Retention:
    def __init__(self, log: EventLog, keep_s: float, clock: Clock) -> None:
        self._log = log
        self._keep_s = keep_s
        self._clock = clock
        self.interval_s = min(MAX_INTERVAL_S, max(1.0, keep_s / 10))

    async def purge(self) -> int:
        """One pass: delete every closed workflow past retention, a batch at a time."""
        total = 0
        while True:
            deleted = await self._log.purge_closed(self._keep_s, BATCH)
            total += deleted
            if deleted < BATCH:
                break
        if total:
            logger.info(
                "retention: deleted %d closed workflow(s) older than %.0f s", total, self._keep_s
            )
        return total

    async def run(self) -> None:
        while True:
            try:
                await self.purge()
            except AccordError:
                logger.warning("retention: event log unavailable")
            await self._clock.sleep(self.interval_s)
