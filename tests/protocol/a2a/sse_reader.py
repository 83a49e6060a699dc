"""An A2A event stream (SSE) read on its own thread, so a test can hold several open at once
and act on the task while they are open. Every wait has a deadline."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any, Final

import httpx

DEADLINE_S: Final = 20.0
_END: Final = object()  # put on the queue when the server closed the stream


class SseReader:
    """Subscribes to a task (``SubscribeToTask``) over ``transport`` and queues each event's
    result; ``keep`` events are read before the reader closes the stream itself (None: read
    until the server closes it)."""

    def __init__(
        self,
        url: str,
        transport: str,
        headers: dict[str, str],
        task_id: str,
        *,
        keep: int | None = None,
    ) -> None:
        self._events: queue.Queue[object] = queue.Queue()
        self._keep = keep
        self._headers = headers
        self._body: dict[str, Any] | None = None
        if transport == "jsonrpc":
            self._method, self._url = "POST", url + "/"
            self._body = {
                "jsonrpc": "2.0",
                "id": 11,
                "method": "SubscribeToTask",
                "params": {"id": task_id},
            }
        else:
            self._method, self._url = "GET", f"{url}/tasks/{task_id}:subscribe"
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        seen = 0
        try:
            with (
                httpx.Client(timeout=DEADLINE_S) as http,
                http.stream(
                    self._method, self._url, headers=self._headers, json=self._body
                ) as response,
            ):
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    event: dict[str, Any] = json.loads(line[5:])
                    self._events.put(event.get("result", event))
                    seen += 1
                    if self._keep is not None and seen >= self._keep:
                        return  # leaving the block closes this client's connection
        finally:
            self._events.put(_END)

    def next(self) -> dict[str, Any]:
        """The next event; fails at the deadline or when the stream ended instead."""
        item = self._events.get(timeout=DEADLINE_S)
        assert item is not _END, "the stream ended"
        assert isinstance(item, dict)
        return item

    def rest(self) -> list[dict[str, Any]]:
        """Every further event until the stream closes; fails if it is still open at the
        deadline."""
        events: list[dict[str, Any]] = []
        while (item := self._events.get(timeout=DEADLINE_S)) is not _END:
            assert isinstance(item, dict)
            events.append(item)
        self._thread.join(DEADLINE_S)
        return events

    @property
    def closed(self) -> bool:
        return not self._thread.is_alive()


def state_of(event: dict[str, Any]) -> str | None:
    """The task state an event carries (a Task or a status update), None for others."""
    holder = event.get("task") or event.get("statusUpdate") or {}
    state = holder.get("status", {}).get("state")
    return str(state) if state is not None else None
