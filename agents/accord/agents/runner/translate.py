"""Workflow log events -> Runner events, and a settled workflow -> the final event.

Node progress is a ``thought`` authored by the node (``intake``, ``policy``, ``decide`` ...),
with the node's output as a ``data`` part when it finishes. The final event is authored by the
orchestrator: the answer as ``text`` and, as ``data``, the decision (or what it waits for, or
the error), with the workflow's contract status.
"""

from __future__ import annotations

from typing import Any

from accord.agents.refund.conversation import STARTED, Finished, outcome
from accord.agents.runner.events import Content, Event, Part, Usage
from accord.agents.runner.hub import ORCHESTRATOR
from accord.contracts.errors import AccordError
from accord.contracts.status import Status
from accord.runtime.workflow import EventType, LogEvent, WorkflowSnapshot


def progress_parts(event: LogEvent) -> list[Part] | None:
    """The parts of a node's progress event, or None for log events the caller need not see."""
    node = event.node or ""
    data = event.data
    if event.type is EventType.NODE_STARTED:
        attempt = int(data.get("attempt") or 1)
        again = f" (attempt {attempt})" if attempt > 1 else ""
        return [Part.thought_of(f"{node}: {STARTED.get(node, 'started')}{again}")]
    if event.type is EventType.NODE_OUTPUT:
        label = data.get("label")
        output = data.get("output")
        parts = [Part.thought_of(f"{node}: done" + (f" -> {label}" if label else ""))]
        if isinstance(output, dict):
            parts.append(Part.data_of({"node": node, "output": output, "label": label}))
        return parts
    if event.type is EventType.NODE_FAILED:
        code = (data.get("error") or {}).get("code")
        what = "failed" if data.get("final") else "retrying"
        return [Part.thought_of(f"{node}: {code}, {what}")]
    if event.type is EventType.INTERRUPTED:
        reason = data.get("reason")
        return [Part.thought_of(f"{node}: waiting ({reason})")]
    if event.type is EventType.RESUMED:
        return [Part.thought_of(f"{node}: answer received")]
    if event.type is EventType.TIMER_FIRED:
        return [Part.thought_of(f"{node}: timed out")]
    if event.type is EventType.CANCELED:
        return [Part.thought_of("workflow canceled")]
    return None


def final_event(snapshot: WorkflowSnapshot, invocation_id: str, usage: Usage) -> Event:
    """The invocation's answer: the decision, the question it waits on, or the failure."""
    data: dict[str, Any]
    error: dict[str, Any] | None = None
    try:
        told = outcome(snapshot)
    except AccordError as failure:
        if snapshot.status is not Status.FAILED:
            raise
        error = failure.to_dict()
        data, text = {"error": error}, failure.message
    else:
        if isinstance(told, Finished):
            data, text = told.result, told.text
        else:
            pending = snapshot.interrupts[0]
            data = {
                "waiting_reason": told.reason.value,
                "question": told.question,
                "node": pending.node,
            }
            data.update(told.data or {})
            text = told.question
    return Event(
        invocation_id=invocation_id,
        author=ORCHESTRATOR,
        content=Content(parts=[Part.text_of(text), Part.data_of(data)]),
        usage=usage,
        status=snapshot.status,
        error=error,
        workflow_id=snapshot.workflow_id,
    )
