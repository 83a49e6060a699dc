"""Who is told about appended events: `Runtime.subscribe` and the executions that append."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from accord.runtime.workflow.events import LogEvent

logger = logging.getLogger(__name__)

Observer = Callable[[LogEvent], Awaitable[None]]


class Observers:
    def __init__(self) -> None:
        self._entries: list[tuple[Observer, str | None]] = []

    def __bool__(self) -> bool:
        """Whether anyone listens (an append with nobody listening skips `notify`)."""
        return bool(self._entries)

    def subscribe(self, observer: Observer, workflow_id: str | None) -> Callable[[], None]:
        entry = (observer, workflow_id)
        self._entries.append(entry)

        def unsubscribe() -> None:
            if entry in self._entries:
                self._entries.remove(entry)

        return unsubscribe

    async def notify(self, events: list[LogEvent]) -> None:
        """Call every observer with each event (of its workflow), in order. An observer that
        raises is logged and does not stop the others: the events are durable already."""
        for observer, only in list(self._entries):
            for event in events:
                if only is None or event.workflow_id == only:
                    try:
                        await observer(event)
                    except Exception:
                        logger.exception("workflow observer failed")
