"""Helpers of the Runner tests."""

from __future__ import annotations

from accord.agents.runner import Event, Runner


async def collect(runner: Runner, text: str, *, user: str, session: str) -> list[Event]:
    return [e async for e in runner.run_async(text, user=user, session=session)]


def final(events: list[Event]) -> Event:
    finals = [e for e in events if e.is_final_response()]
    assert len(finals) == 1
    assert events[-1] is finals[0]
    return finals[0]
