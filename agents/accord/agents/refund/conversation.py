"""The refund conversation: one component behind the A2A executor and the in-process Runner.

A conversation is one refund workflow. Its first message starts it; a later message answers
the question it waits on, or follows its run (on this replica, or in the shared log while
another replica runs it); a message while an approval is pending changes nothing. Both entry
points (``refund/executor.py`` for A2A, ``runner/runner.py`` in process) decide and drive
through here, so they cannot drift.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Final

from accord.agents.refund.budget import TURN_COST
from accord.agents.refund.config import GRAPH_NAME
from accord.agents.refund.facts import WorkflowInput, answer_value
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow import EventType, LogEvent, Runtime, WorkflowHandle, WorkflowSnapshot
from accord.runtime.workflow.observers import Observer

FOLLOW_POLL_S: Final = (0.05, 1.0)  # first and longest pause reading another replica's run
APPROVAL_TEXT: Final = "waiting for an approver"
STARTED: Final = {
    "intake": "reading your request",
    "order": "looking up the order (orders.lookup)",
    "policy": "asking policy-check whether the refund is allowed",
    "risk": "asking risk-check how risky the refund is",
    "decide": "deciding",
    "approval": "the refund needs an approver",
    "refund": "issuing the refund (refunds.issue)",
    "explain": "explaining the decision",
    "rejected": "explaining the approver's decision",
}

# Lines the stream leaves out (each is one status update the orchestrator serialises and every
# client parses; a stored task's history shows the same lines). "checks" only starts the three
# checks, whose own lines follow: it has none. "decide" reaches nothing and waits on nothing,
# so its "done" line (the decision and the route) follows its start at once and says more.
UNSHOWN_NODES: Final = frozenset({"checks"})
UNSHOWN_STARTS: Final = UNSHOWN_NODES | {"decide"}


@dataclass(frozen=True, slots=True)
class Step:
    """What one message does to its workflow: start it, answer it, or (neither) follow it."""

    workflow_id: str
    start: dict[str, Any] | None = None  # the input of a new workflow of ``graph``
    graph: str = GRAPH_NAME
    scope: str | None = None  # with start: the owner scope and context it is listed under
    context_id: str | None = None
    answer: tuple[str, Any, str] | None = None  # interrupt id, value, principal


@dataclass(frozen=True, slots=True)
class Finished:
    result: dict[str, Any]
    text: str


@dataclass(frozen=True, slots=True)
class Waiting:
    reason: WaitingReason
    question: str
    data: dict[str, Any] | None


Settled = Finished | Waiting


class Conversation:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @staticmethod
    def start(workflow_id: str, inp: WorkflowInput) -> Step:
        return Step(
            workflow_id,
            start=inp.stored(),
            scope=inp.owner,
            context_id=inp.session,
        )

    async def next_step(
        self,
        workflow_id: str,
        *,
        text: str,
        data: dict[str, Any] | None,
        principal: str,
        message_id: str | None = None,
    ) -> Step | None:
        """A later message: the answer to the pending question, or following the run; None
        when nothing would run (an approval is pending, or the workflow has ended)."""
        snapshot = await self.runtime.snapshot(workflow_id)
        if snapshot.status is Status.WAITING:
            asked = next((p for p in snapshot.interrupts if p.reason is WaitingReason.INPUT), None)
            if asked is None:
                return None
            value = answer_value(text, data, asked.payload, message_id=message_id)
            return Step(workflow_id, answer=(asked.interrupt_id, value, principal))
        if snapshot.status in (Status.RUNNING, Status.QUEUED):
            return Step(workflow_id)
        return None

    async def drive(self, step: Step, observe: Observer | None = None) -> WorkflowSnapshot:
        """Run the step until the workflow settles (completed, failed or waiting), handing
        each of its events to ``observe`` as it is appended here."""
        unsubscribe = self.runtime.subscribe(observe, step.workflow_id) if observe else None
        try:
            handle: WorkflowHandle
            if step.start is not None:
                handle = await self.runtime.start(
                    step.graph,
                    workflow_id=step.workflow_id,
                    input=step.start,
                    scope=step.scope,
                    context_id=step.context_id,
                    # the customer's first turn is paid from the request's budget (budget.py)
                    spent=dict(TURN_COST) if step.graph == GRAPH_NAME else None,
                )
            elif step.answer is not None:
                interrupt_id, value, principal = step.answer
                handle = await self.runtime.resume(
                    step.workflow_id, interrupt_id, value, principal, spent=dict(TURN_COST)
                )
            else:
                handle = self.runtime.handle(step.workflow_id)
            snapshot = await handle.settled()
            pause_s = FOLLOW_POLL_S[0]
            while snapshot.status is Status.RUNNING:
                # It runs on another replica (or on none until a dead one's lease expires):
                # follow it in the shared log, and on this replica's runner once it takes over.
                # Failing the customer's request here would hide the outcome (docs/replicas.md).
                await asyncio.sleep(pause_s)
                pause_s = min(pause_s * 2, FOLLOW_POLL_S[1])
                snapshot = await self.runtime.handle(step.workflow_id).settled()
        finally:
            if unsubscribe is not None:
                unsubscribe()
        return snapshot


def outcome(snapshot: WorkflowSnapshot) -> Settled:
    """What the customer is told of a settled workflow; a failed one raises its error."""
    if snapshot.status is Status.COMPLETED:
        result = final_result(snapshot.result)
        return Finished(result=result, text=str(result.get("explanation") or ""))
    if snapshot.status is Status.WAITING:
        pending = snapshot.interrupts[0]
        reason, question, data = waiting_answer(pending.reason, pending.payload)
        return Waiting(reason=reason, question=question, data=data)
    if snapshot.status is Status.FAILED:
        raise snapshot.error or AccordError(ErrorCode.INTERNAL, "the workflow failed")
    raise AccordError(
        ErrorCode.UNAVAILABLE,
        "the workflow is busy elsewhere; try again",
        {"workflow_id": snapshot.workflow_id},
    )


def final_result(sinks: dict[str, Any]) -> dict[str, Any]:
    """The skill output: the output of the one end node that ran."""
    for value in sinks.values():
        if isinstance(value, dict) and "decision" in value:
            return value
    raise AccordError(ErrorCode.INTERNAL, "the workflow finished without a result")


def waiting_answer(
    reason: WaitingReason, payload: Any
) -> tuple[WaitingReason, str, dict[str, Any] | None]:
    """What a waiting workflow asks: (reason, question, data)."""
    body = payload if isinstance(payload, dict) else {}
    if reason is WaitingReason.APPROVAL:
        return reason, APPROVAL_TEXT, {"approval": body}
    return reason, str(body.get("question") or "please answer"), None


# -- what each step looks like to the customer -----------------------------------------------


def describe(event: LogEvent) -> str | None:
    """The progress line of a workflow event (None: the event is not shown)."""
    node = event.node or ""
    if node in UNSHOWN_NODES:
        return None
    if event.type is EventType.NODE_STARTED:
        if node in UNSHOWN_STARTS:
            return None
        return f"{node}: {STARTED.get(node, 'started')}"
    if event.type is EventType.NODE_OUTPUT:
        label = event.data.get("label")
        route = f" -> {label}" if label else ""
        return f"{node}: done{_summary(node, event.data.get('output'))}{route}"
    if event.type is EventType.NODE_FAILED and not event.data.get("final"):
        code = (event.data.get("error") or {}).get("code")
        return f"{node}: {code}, retrying"
    if event.type is EventType.RESUMED:
        return f"{node}: answer received"
    return None


def _summary(node: str, output: Any) -> str:
    if not isinstance(output, dict):
        return ""
    if node == "intake":
        return f" (order {output.get('order_id')}, reason {output.get('reason')})"
    if node in ("order", "policy", "risk") and output.get("found") is False:
        return " (order not found)"
    if node == "policy":
        return f" (eligible: {output.get('eligible')}, rule {output.get('rule')})"
    if node == "risk":
        return f" (risk {output.get('risk')})"
    if node == "approval":
        return f" ({output.get('decision')} by {output.get('approver')})"
    if "decision" in output:
        return f" ({output['decision']})"
    return ""
