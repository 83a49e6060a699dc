"""accord.agents.workflow: a durable workflow runtime on an append-only event log."""

from accord.agents.workflow.clock import Clock, SystemClock
from accord.agents.workflow.context import Answer, NodeContext
from accord.agents.workflow.eventlog import (
    EventLog,
    VersionConflictError,
    WorkflowClosedError,
    WorkflowRecord,
    open_event_log,
)
from accord.agents.workflow.events import EventType, LogEvent, NewEvent, Timer
from accord.agents.workflow.graph import Graph, NodeSpec, Route
from accord.agents.workflow.runtime import Runtime, WorkflowHandle, WorkflowSnapshot
from accord.agents.workflow.state import PendingInterrupt

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
