"""Pause points for crash tests: ``ACCORD_TEST_PAUSE="refund.before_issue@O-1004:30,..."``.

At a listed point the orchestrator writes ``accord-test-pause POINT@ORDER`` to stderr and
sleeps the given seconds (default 60), so a test can SIGKILL it exactly there and restart it.
``POINT`` alone pauses every workflow there, ``POINT@ORDER`` only the one for that order. Unset
(the default) the hook costs one dict lookup. Points: ``order.after_lookup``,
``policy.child_running``, ``refund.before_issue``, ``refund.after_issue``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from functools import cache
from typing import Final

PAUSE_ENV: Final = "ACCORD_TEST_PAUSE"
MARKER: Final = "accord-test-pause"


@cache
def _plan() -> dict[str, float]:
    plan: dict[str, float] = {}
    for raw in os.environ.get(PAUSE_ENV, "").split(","):
        point, _, seconds = raw.strip().partition(":")
        if point:
            plan[point] = float(seconds) if seconds else 60.0
    return plan


async def pause(point: str, order_id: object) -> None:
    plan = _plan()
    if not plan:
        return
    seconds = plan.get(f"{point}@{order_id}", plan.get(point))
    if seconds is None:
        return
    print(f"{MARKER} {point}@{order_id}", file=sys.stderr, flush=True)
    await asyncio.sleep(seconds)
