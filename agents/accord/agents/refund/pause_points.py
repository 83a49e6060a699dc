"""Pause points for crash tests: ``ACCORD_TEST_PAUSE="refund.before_issue@O-1004:30,..."``.

At a planned point the orchestrator writes ``accord-test-pause POINT@ORDER`` to stderr and
sleeps the given seconds (default 60), so a test can SIGKILL it exactly there and restart it.
``POINT`` alone pauses every workflow there, ``POINT@ORDER`` only the one for that order. Points:
``order.after_lookup``, ``policy.child_running``, ``refund.before_issue``, ``refund.after_issue``.

Nothing is planned unless the service installs a plan at start, which it does only from the
settings of development mode (``ACCORD_DEV=1``; the settings refuse ``ACCORD_TEST_PAUSE``
otherwise). Without a plan, :func:`pause` returns at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from typing import Final

MARKER: Final = "accord-test-pause"

_plan: dict[str, float] = {}


def install(plan: Mapping[str, float]) -> None:
    """Plan the pauses of this process (``POINT`` or ``POINT@ORDER`` -> seconds)."""
    _plan.clear()
    _plan.update(plan)


async def pause(point: str, order_id: object) -> None:
    if not _plan:
        return
    seconds = _plan.get(f"{point}@{order_id}", _plan.get(point))
    if seconds is None:
        return
    print(f"{MARKER} {point}@{order_id}", file=sys.stderr, flush=True)
    await asyncio.sleep(seconds)
