"""accord.runtime.workflow: a durable workflow runtime on an append-only event log."""

from accord.runtime.workflow.clock import Clock, SystemClock
from accord.runtime.workflow.context import Answer, NodeContext
from accord.runtime.workflow.eventlog import (
    EventLog,
    VersionConflictError,
    WorkflowClosedError,
    WorkflowRecord,
    open_event_log,
)
from accord.runtime.workflow.events import EventType, LogEvent, NewEvent, Timer
from accord.runtime.workflow.graph import Graph, NodeSpec, Route
from accord.runtime.workflow.runtime import Runtime, WorkflowHandle, WorkflowSnapshot
from accord.runtime.workflow.state import PendingInterrupt

__all__ = [
    "Answer",
    "Clock",
    "EventLog",
    "EventType",
    "Graph",
    "LogEvent",
    "NewEvent",
    "NodeContext",
    "NodeSpec",
    "PendingInterrupt",
    "Route",
    "Runtime",
    "SystemClock",
    "Timer",
    "VersionConflictError",
    "WorkflowClosedError",
    "WorkflowHandle",
    "WorkflowRecord",
    "WorkflowSnapshot",
    "open_event_log",
]
