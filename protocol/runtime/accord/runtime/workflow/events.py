"""The facts a workflow's log records, in the order they happened.

Every event carries the workflow id, a per-workflow sequence number (1, 2, ...) and a JSON
object of data. The log is the only state a workflow has: the runtime rebuilds everything
else by replaying these events (see `state.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    WORKFLOW_STARTED = "workflow_started"  # data: graph, version, input
    NODE_STARTED = "node_started"  # node; data: attempt
    NODE_OUTPUT = "node_output"  # node; data: output, label
    NODE_FAILED = "node_failed"  # node; data: error, attempt, retry_in_ms | final
    INTERRUPTED = "interrupted"  # node; data: interrupt_id, reason, payload, index
    RESUMED = "resumed"  # node; data: interrupt_id, value, principal
    TIMER_SET = "timer_set"  # node; data: timer_id, interrupt_id, due_at
    TIMER_FIRED = "timer_fired"  # node; data: timer_id, interrupt_id
    CANCELED = "canceled"  # data: principal, reason
    WORKFLOW_FINISHED = "workflow_finished"  # data: status, outputs, error


encode_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
"""JSON text of an event's data (one shared encoder: json.dumps builds one per call)."""

# After one of these nothing more may be appended to the workflow's log.
CLOSING: frozenset[EventType] = frozenset({EventType.CANCELED, EventType.WORKFLOW_FINISHED})


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event before it is appended: the log assigns its sequence number."""

    type: EventType
    node: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    encoded: str | None = None  # `data` as JSON, when the producer already has it

    def data_json(self) -> str:
        return self.encoded if self.encoded is not None else encode_json(self.data)


@dataclass(frozen=True, slots=True)
class LogEvent:
    """An appended event."""

    workflow_id: str
    seq: int
    type: EventType
    node: str | None
    data: dict[str, Any]
    at: float  # seconds since the epoch, when the append committed (wall clock)


@dataclass(frozen=True, slots=True)
class Timer:
    """A due-time row kept by the log beside the events (a projection of timer_set)."""

    workflow_id: str
    timer_id: str
    due_at: float  # seconds since the epoch
