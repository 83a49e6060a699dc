"""An event queue that keeps what an executor enqueues, for the in-process executor tests."""

from __future__ import annotations

from typing import Any

from a2a.server.events import EventQueue
from a2a.types import TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict

from accord.contracts.status import ContractState
from accord.protocol.a2a.wire import read_contract_state, read_error


class RecordingQueue(EventQueue):
    def __init__(self) -> None:
        self.events: list[Any] = []

    async def enqueue_event(self, event: Any) -> None:
        self.events.append(event)

    @property
    def statuses(self) -> list[TaskStatusUpdateEvent]:
        return [e for e in self.events if isinstance(e, TaskStatusUpdateEvent)]

    def states(self) -> list[ContractState]:
        return [read_contract_state(e.status, e.metadata)[0] for e in self.statuses]

    def last_error_code(self) -> str | None:
        last = self.statuses[-1]
        error = read_error(last.status.message, last.metadata)
        return error.code.value if error is not None else None

    def status_meta(self, index: int = -1) -> dict[str, Any]:
        """The metadata of a status update (where the contract status travels)."""
        meta: dict[str, Any] = MessageToDict(self.statuses[index].metadata)
        return meta
