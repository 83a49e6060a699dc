"""Where observed calls go: the invocation currently listening to a workflow.

The Runner sets :data:`CURRENT_WORKFLOW` before it starts or resumes a workflow; the runtime
starts the workflow's node tasks from that context, so a tool call, an agent call or a model
run made by a node knows its workflow without any change to the nodes. The value is the
workflow id (not the invocation), so a node task started by an earlier invocation still reaches
the one listening now.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from accord.agents.runner.events import Content, Event, Part, Usage

CURRENT_WORKFLOW: ContextVar[str | None] = ContextVar("accord_runner_workflow", default=None)
ORCHESTRATOR: Final = "orchestrator"


@dataclass
class Sink:
    """One invocation's event queue (None ends it)."""

    invocation_id: str
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    usage: Usage = field(default_factory=Usage)

    def put(self, event: Event) -> None:
        if event.usage is not None:
            self.usage = self.usage + event.usage
        self.queue.put_nowait(event)


class Hub:
    def __init__(self) -> None:
        self._sinks: dict[str, Sink] = {}
        self._running: dict[str, set[str]] = {}

    def attach(self, workflow_id: str, sink: Sink) -> Callable[[], None]:
        self._sinks[workflow_id] = sink

        def detach() -> None:
            if self._sinks.get(workflow_id) is sink:
                del self._sinks[workflow_id]
            self._running.pop(workflow_id, None)

        return detach

    def sink(self, workflow_id: str | None = None) -> Sink | None:
        wanted = workflow_id or CURRENT_WORKFLOW.get()
        return self._sinks.get(wanted) if wanted else None

    def emit(
        self,
        author: str,
        parts: list[Part],
        *,
        workflow_id: str | None = None,
        partial: bool = False,
        usage: Usage | None = None,
    ) -> None:
        sink = self.sink(workflow_id)
        if sink is None:
            return  # nobody listens (a recovered workflow, a timer): nothing to tell
        sink.put(
            Event(
                invocation_id=sink.invocation_id,
                author=author,
                content=Content(parts=parts),
                partial=partial,
                usage=usage,
                workflow_id=workflow_id or CURRENT_WORKFLOW.get(),
            )
        )

    # -- which node is running (to name the author of a model run) ---------------------------
    def started(self, workflow_id: str, node: str) -> None:
        self._running.setdefault(workflow_id, set()).add(node)

    def ended(self, workflow_id: str, node: str) -> None:
        self._running.get(workflow_id, set()).discard(node)

    def running_node(self) -> str:
        """The one node running in the current workflow, else the orchestrator."""
        workflow_id = CURRENT_WORKFLOW.get()
        running = self._running.get(workflow_id or "", set())
        return next(iter(running)) if len(running) == 1 else ORCHESTRATOR
