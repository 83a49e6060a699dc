"""A workflow's state as a pure function of its events.

The live runtime and recovery use the same `apply`: the runtime builds events, applies them
here, appends them; recovery reads them and applies them again. So a workflow resumed from
its log is in exactly the state the crashed process had durably reached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow.context import Answer, NodeContext
from accord.runtime.workflow.events import EventType, LogEvent, NewEvent
from accord.runtime.workflow.graph import Graph
from accord.runtime.workflow.spending import add_into, spent_in


@dataclass
class Activation:
    """A node that has been triggered and has not finished."""

    node: str
    inputs: dict[str, Any]
    attempt: int = 0  # attempts started so far
    running: bool = False  # node_started with no outcome yet
    backoff: bool = False  # failed, waiting to be retried
    retry_at: float | None = None  # when the retry is due (logged: a restart keeps it)
    waiting: str | None = None  # interrupt id
    answers: dict[int, Answer] = field(default_factory=dict)
    timed_out: set[int] = field(default_factory=set)
    error: AccordError | None = None


@dataclass(frozen=True, slots=True)
class PendingInterrupt:
    interrupt_id: str
    node: str
    index: int
    reason: WaitingReason
    payload: Any
    timer_id: str | None
    due_at: float | None


@dataclass
class WorkflowState:
    workflow_id: str
    graph: Graph
    input: Any = None
    version: int = 0  # last sequence number applied
    outputs: dict[str, Any] = field(default_factory=dict)
    pending: dict[str, Activation] = field(default_factory=dict)
    interrupts: dict[str, PendingInterrupt] = field(default_factory=dict)
    # Interrupts whose timeout fired: a late answer to one is told so, whichever came first.
    expired: set[str] = field(default_factory=set)
    arrived: dict[str, set[str]] = field(default_factory=dict)
    failure: AccordError | None = None  # a node failed for good with no error path
    finished: Status | None = None  # completed / failed once closed
    canceled: bool = False
    spent: dict[str, int] = field(default_factory=dict)  # summed over the events (spending.py)

    # -- replay -----------------------------------------------------------------------------
    def apply(self, event: LogEvent | NewEvent) -> None:
        if isinstance(event, LogEvent):
            self.version = event.seq
        else:
            self.version += 1
        kind, node, data = event.type, event.node, event.data
        if "spent" in data:
            add_into(self.spent, spent_in(data))
        # The two events of every step first: this runs for every event, live and replayed.
        if kind is EventType.NODE_STARTED and node is not None:
            act = self.pending[node]
            act.attempt = data.get("attempt", act.attempt + 1)
            act.running, act.backoff, act.retry_at = True, False, None
        elif kind is EventType.NODE_OUTPUT and node is not None:
            del self.pending[node]
            self.outputs[node] = data.get("output")
            self._advance(node, data.get("label"))
        elif kind is EventType.WORKFLOW_STARTED:
            self.input = data.get("input")
            start = self.graph.start or ""
            self.pending[start] = Activation(start, {})
        elif kind is EventType.NODE_FAILED and node is not None:
            self._failed(node, data)
        elif kind is EventType.INTERRUPTED and node is not None:
            act = self.pending[node]
            act.running = False
            act.waiting = str(data["interrupt_id"])
            self.interrupts[act.waiting] = PendingInterrupt(
                act.waiting,
                node,
                int(data["index"]),
                WaitingReason(data["reason"]),
                data.get("payload"),
                data.get("timer_id"),
                data.get("due_at"),
            )
        elif kind is EventType.RESUMED:
            pending = self.interrupts.pop(str(data["interrupt_id"]))
            act = self.pending[pending.node]
            act.waiting = None
            act.answers[pending.index] = Answer(data.get("value"), data.get("principal"))
        elif kind is EventType.TIMER_FIRED:
            pending = self.interrupts.pop(str(data["interrupt_id"]))
            self.expired.add(pending.interrupt_id)
            act = self.pending[pending.node]
            act.waiting = None
            act.timed_out.add(pending.index)
        elif kind is EventType.CANCELED:
            self.canceled = True
            self.finished = Status.FAILED
        elif kind is EventType.WORKFLOW_FINISHED:
            self.finished = Status(data["status"])
            if data.get("error"):
                self.failure = AccordError.from_dict(data["error"])

    def _failed(self, node: str, data: dict[str, Any]) -> None:
        act = self.pending[node]
        act.running = False
        error = AccordError.from_dict(data.get("error") or {})
        if not data.get("final"):
            act.backoff = True
            retry_at = data.get("retry_at")
            act.retry_at = float(retry_at) if retry_at is not None else None
            return
        self.pending.pop(node, None)
        target = self.graph.nodes[node].on_error
        if target is None:
            self.failure = error
            return
        self._activate(target, {node: None}, error)

    def _advance(self, source: str, label: str | None) -> None:
        targets, routed = self.graph.successors(source, label)
        for target in targets:
            preds = self.graph.edge_predecessors(target)
            if len(preds) == 1:  # a plain edge: no join bookkeeping
                self._activate(target, {source: self.outputs.get(source)})
                continue
            got = self.arrived.setdefault(target, set())
            got.add(source)
            if got >= preds:
                del self.arrived[target]
                self._activate(target, {p: self.outputs.get(p) for p in sorted(preds)})
        if routed is not None:
            self._activate(routed, {source: self.outputs.get(source)})

    def _activate(
        self, node: str, inputs: dict[str, Any], error: AccordError | None = None
    ) -> None:
        # A node already triggered and not finished is not triggered twice.
        if node not in self.pending:
            self.pending[node] = Activation(node, inputs, error=error)

    # -- questions the runtime asks ---------------------------------------------------------
    def startable(self) -> list[str]:
        """Triggered nodes that are neither running, waiting nor backing off."""
        return [
            name
            for name, act in self.pending.items()
            if not act.running and not act.backoff and act.waiting is None
        ]

    def status(self) -> Status:
        if self.finished is not None:
            return self.finished
        if self.pending and all(act.waiting is not None for act in self.pending.values()):
            return Status.WAITING
        return Status.RUNNING

    def settled(self) -> bool:
        return self.failure is not None or not self.pending

    def sink_outputs(self) -> dict[str, Any]:
        return {n: v for n, v in self.outputs.items() if self.graph.is_sink(n)}

    def waiting_contexts(self) -> list[NodeContext]:
        """A context for each node that waits for an answer (what its cancel hook sees). Each
        gets its pending interrupt's payload as ``waiting_on``: a hook must not ask the
        runtime (the execution that cancels is the one that would have to answer)."""
        return [
            NodeContext(
                self.workflow_id,
                act.node,
                self.input,
                act.inputs,
                MappingProxyType(self.outputs),
                act.attempt,
                dict(act.answers),
                frozenset(act.timed_out),
                act.error,
                waiting_on=self.interrupts[act.waiting].payload,
            )
            for act in self.pending.values()
            if act.waiting is not None and act.waiting in self.interrupts
        ]

    def error(self) -> AccordError | None:
        if self.canceled:
            return AccordError(ErrorCode.CANCELED, "the workflow was canceled")
        return self.failure
