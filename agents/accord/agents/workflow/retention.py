"""Retention: closed workflows older than the retention period are deleted from the log.

Without it every refund, refused request and approval stayed forever (a task was kept as long
as the disk lasted). Only closed workflows go (completed, failed, canceled): a workflow that
waits for an approver for a month is still open and stays. The payments ledger, not this log,
is the record of money, so deleting an old workflow never makes a refund happen twice.
"""

from __future__ import annotations

import logging
from typing import Final

from accord.agents.workflow.clock import Clock
from accord.agents.workflow.eventlog import EventLog
from accord.contracts.errors import AccordError

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
