"""An approval nobody gives times out, on the Runner's clock: the real refund graph and peers
in process, and a clock the test moves instead of waiting a day."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.agents.runner.helpers import collect, final
from tests.support.clock import ManualClock

from accord.agents.runner import Runner
from accord.contracts.status import Status
from accord.runtime.workflow import EventLog, EventType, LogEvent, open_event_log

pytestmark = pytest.mark.timeout(120)
TIMEOUT_S = 86_400.0


async def _finished(log: EventLog, workflow_id: str, deadline_s: float = 30.0) -> list[LogEvent]:
    """The workflow's events once it has ended. The log is read until then: the Runner tells
    nobody outside a request; a real-time deadline bounds the wait."""
    async with asyncio.timeout(deadline_s):
        while True:
            events = await log.read(workflow_id)
            if events and events[-1].type in (EventType.WORKFLOW_FINISHED, EventType.CANCELED):
                return events
            await asyncio.sleep(0.02)  # polling the log, bounded by the deadline above


async def test_an_approval_nobody_gives_fails_the_refund_when_the_clock_passes_it(
    data_dir: Path,
) -> None:
    clock = ManualClock(start=1_000_000_000.0)  # far from the real time: no mix-up possible
    url = f"sqlite:///{data_dir / 'approval-timeout.db'}"
    runner = Runner(in_process=True, approval_timeout_s=TIMEOUT_S, clock=clock, event_log_url=url)
    log = open_event_log(url)
    async with runner:
        await log.open()
        try:
            text = "I changed my mind, please refund the laptop, order O-1004"
            asked = final(await collect(runner, text, user="C-03", session="t"))
            assert asked.status is Status.WAITING
            assert (asked.data or {})["waiting_reason"] == "approval"
            timer = await log.next_timer()
            assert timer is not None
            assert timer.workflow_id == asked.workflow_id
            assert timer.due_at == clock.now() + TIMEOUT_S

            await clock.advance(TIMEOUT_S)
            events = await _finished(log, asked.workflow_id)
        finally:
            await log.close()
    kinds = [e.type for e in events]
    assert kinds.count(EventType.TIMER_FIRED) == 1
    assert EventType.RESUMED not in kinds
    assert "refund" not in {e.node for e in events}  # no money moved
    assert events[-1].data["status"] == "failed"
    assert events[-1].data["error"]["code"] == "RETRYABLE_TIMEOUT"
