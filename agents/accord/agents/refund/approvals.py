"""Approvals: skill refund.approve as a one-node workflow, and GET /approvals (the queue).

An approver cannot address the customer's task (it belongs to the customer), so they send a
NEW message with skill ``refund.approve`` and ``{task_id, decision, note}``. That message's
task is itself a workflow ("approval"), so it is recorded, listed and recovered like every
orchestrator task: its one node resumes the customer's workflow. Rules, in this order:

- the principal lacks the ``approver`` role                      -> PERMISSION_DENIED (refused)
- no refund workflow with that id, or one of another app          -> NOT_FOUND (the same answer:
  an approver learns nothing about another app's refunds)
- the approver is that refund's customer (same subject), or the
  owner of its task                                               -> PERMISSION_DENIED
- the workflow is not waiting for an approval (it ended: answered,
  canceled, or its approval timeout passed, even if the timer has
  not fired yet: the runtime fires it instead of taking the answer) -> INVALID_INPUT

Which deadline governs a refund that waits (ENV-009): the approval timeout
(``ACCORD_APPROVAL_TIMEOUT_S``) bounds the approval; the customer's envelope deadline bounds only
the customer's own wait (their client gets RETRYABLE_TIMEOUT and may read the task later). No
approval pays after the task has ended.

So an approver decides only refunds of their own app (the app of the credential, compared with
the refund's ``app``: the customer's, or the tenant app a service requested it for), and never
their own: one person holding the customer and the approver roles, in one app or two, cannot
approve their refund. The table of who may do what is :mod:`accord.agents.permissions`.

The customer's task shows the outcome at once: it is derived from the same log. The node is
safe to run again after a crash: the resume it made names this approval, so a second run finds
it and only waits for the outcome. The queue lists the pending approval interrupts of the
approver's app (approvals always carry a timeout, so the log's durable timers are the index, no
second table), and the refunds of that app that need attention (attention.py).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from accord.agents.models.base import Language
from accord.agents.permissions import Operation, require
from accord.agents.refund.attention import attention_items
from accord.agents.refund.conversation import Conversation, Step, describe, final_result
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.reported_errors import told
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import TERMINAL, Status, WaitingReason
from accord.protocol.auth import Principal, owner_key
from accord.runtime.workflow import (
    EventType,
    Graph,
    LogEvent,
    NodeContext,
    PendingInterrupt,
    Runtime,
    WorkflowSnapshot,
)
from accord.runtime.workflow.event_facts import WORKFLOW_EVENT_KEY, EventFacts

APPROVE_SKILL: Final = "refund.approve"
APPROVALS_PATH: Final = "/approvals"
APPROVAL_GRAPH: Final = "approval"
APPROVAL_GRAPH_VERSION: Final = "1"
APPROVAL_TASK_KEY: Final = "approval_task"  # in the resume value: which approval made it
QUEUE_LIMIT: Final = 500
APPROVAL_KIND: Final = "approval"  # a queue item's kind (the other: attention.ATTENTION_KIND)
_FAR_FUTURE_S: Final = 100 * 365 * 86400.0


class ApprovalInput(BaseModel):
    """The approval workflow's input: who decides what, from the verified principal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    owner: str  # the approver's owner scope: the approval task is theirs
    session: str
    message_id: str | None = None
    data: dict[str, Any] | None = None
    approver: str
    approver_app: str
    task_id: str
    decision: str
    note: str = ""


def approval_input(
    principal: Principal, context_id: str, data: dict[str, Any] | None, message_id: str | None
) -> ApprovalInput:
    """The input of an approval, or PERMISSION_DENIED for a principal who may not approve."""
    require_approver(principal)
    body = data or {}
    return ApprovalInput(
        owner=principal.owner,
        session=context_id,
        message_id=message_id,
        data=dict(body),
        approver=principal.subject,
        approver_app=principal.app,
        task_id=str(body.get("task_id") or ""),
        decision=str(body.get("decision") or ""),
        note=str(body.get("note") or ""),
    )


async def decide_refund(
    conversation: Conversation, approval_id: str, inp: ApprovalInput
) -> dict[str, Any]:
    """Run an approver's decision as the approval workflow ``approval_id`` (listed under the
    approver's scope): its result (``task_id``, ``decision``, the refund's ``outcome``), or
    the error that refused it. The A2A skill ``refund.approve`` and the Runner's ``approve``
    both decide through here."""
    step = Step(
        approval_id,
        start=inp.model_dump(mode="json"),
        graph=APPROVAL_GRAPH,
        scope=inp.owner,
        context_id=inp.session,
    )
    snapshot = await conversation.drive(step)
    if snapshot.status is Status.FAILED:
        raise snapshot.error or AccordError(ErrorCode.INTERNAL, "the approval failed")
    return final_result(snapshot.result)


def build_approval_graph(runtime: Runtime) -> Graph:
    async def decide(ctx: NodeContext) -> dict[str, Any]:
        return await _decide(runtime, ctx)

    graph = Graph(APPROVAL_GRAPH, version=APPROVAL_GRAPH_VERSION)
    graph.node("decide", decide)
    return graph


async def refuse_before_task(
    runtime: Runtime, principal: Principal, data: dict[str, Any] | None
) -> None:
    """The refusals an approval can be told before its task exists (the gate's admission,
    ContractExecutor.admit_task): a refused approval is an error answer, not a failed task in
    the approver's list. The approval node checks the same again (the refund may stop waiting
    in between). A body without a ``task_id`` string is left to the skill's schema."""
    require_approver(principal)
    target = (data or {}).get("task_id")
    if not isinstance(target, str) or not target:
        return
    events = await runtime.log.read(target)
    _check_decider(events, target, principal.subject, principal.app)
    _check_waiting(runtime.replay(events), target)


def _check_decider(events: list[LogEvent], target: str, approver: str, app: str) -> None:
    """NOT_FOUND unless ``target`` is a refund of ``app``; PERMISSION_DENIED for its customer."""
    customer = _refund_input(events)
    if customer is None or customer.app != app:
        raise AccordError(ErrorCode.NOT_FOUND, "no refund task with that id", {"task_id": target})
    own_task = owner_key(app, approver) == customer.owner
    if approver == customer.customer_id or own_task:
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            "a customer cannot approve their own refund",
            {"task_id": target},
        )


def _check_waiting(snapshot: WorkflowSnapshot, target: str) -> PendingInterrupt:
    """The refund's pending approval; INVALID_INPUT when it waits for none (it ended)."""
    pending = next((p for p in snapshot.interrupts if p.reason is WaitingReason.APPROVAL), None)
    if pending is None or snapshot.status in TERMINAL:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            "this refund is not waiting for an approval",
            {"task_id": target, "status": snapshot.status.value},
        )
    return pending


async def _decide(runtime: Runtime, ctx: NodeContext) -> dict[str, Any]:
    inp = ApprovalInput.model_validate(ctx.input)
    target = inp.task_id
    events = await runtime.log.read(target)
    _check_decider(events, target, inp.approver, inp.approver_app)
    already = any(
        e.type is EventType.RESUMED
        and isinstance(e.data.get("value"), dict)
        and e.data["value"].get(APPROVAL_TASK_KEY) == ctx.workflow_id
        for e in events
    )
    if already:  # this node ran before a crash and its resume was recorded
        after = await runtime.handle(target).settled()
    else:
        # Read from the log (not loaded): an ended workflow (canceled too) answers as one.
        pending = _check_waiting(runtime.replay(events), target)
        value = {
            "decision": inp.decision,
            "note": inp.note,
            "approver": inp.approver,
            APPROVAL_TASK_KEY: ctx.workflow_id,
        }
        try:
            handle = await runtime.resume(target, pending.interrupt_id, value, inp.approver)
        except AccordError as error:
            if error.code not in (ErrorCode.NOT_FOUND, ErrorCode.UNSUPPORTED_OPERATION):
                raise
            # Answered, canceled or timed out in between (the runtime fires a due timer
            # rather than take a late answer): the refund ended, this approval pays nothing.
            ended = runtime.replay(await runtime.log.read(target))
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                "this refund is no longer waiting for an approval",
                {"task_id": target, "status": ended.status.value},
            ) from None
        after = await handle.settled()
    return {"task_id": target, "decision": inp.decision, "outcome": _outcome(after)}


def approval_text(result: dict[str, Any]) -> str:
    return f"{result.get('decision')} recorded for task {result.get('task_id')}"


async def approval_queue(runtime: Runtime, principal: Principal) -> list[dict[str, Any]]:
    """The approver's queue: the pending approvals of their app they may decide (task id,
    interrupt id, due time, the facts, the workflow's events with their times;
    ``kind: "approval"``), then that app's refunds that need
    attention (``kind: "attention"``). Another app's refunds are not in it, nor their own."""
    require(principal, Operation.READ_APPROVALS)
    timers = await runtime.log.due_timers(runtime.clock.now() + _FAR_FUTURE_S, QUEUE_LIMIT)
    items: list[dict[str, Any]] = []
    for workflow_id in dict.fromkeys(t.workflow_id for t in timers):
        events = await runtime.log.read(workflow_id)
        customer = _refund_input(events)
        if customer is None or customer.app != principal.app:
            continue
        if principal.subject == customer.customer_id or principal.owner == customer.owner:
            continue  # theirs: they may not decide it (it shows in their own tasks)
        try:
            snapshot = runtime.replay(events)
        except AccordError:
            continue
        for pending in snapshot.interrupts:
            if pending.reason is WaitingReason.APPROVAL:
                items.append(
                    {
                        "kind": APPROVAL_KIND,
                        "task_id": workflow_id,
                        "interrupt_id": pending.interrupt_id,
                        "due_at": pending.due_at,
                        "facts": pending.payload,
                        "workflow_events": workflow_events(events),
                    }
                )
    return items + await attention_items(runtime, principal.app)


def workflow_events(events: list[LogEvent]) -> list[dict[str, Any]]:
    """The facts of the refund's log events that its status messages report (event_facts.py),
    in log order: the approver's case draws the workflow with its times from them (the
    approver may not read the customer's task, where the same facts are)."""
    facts = EventFacts()
    out: list[dict[str, Any]] = []
    for event in events:
        facts.seen(event)
        if describe(event) is not None:
            out.append(facts.of(event)[WORKFLOW_EVENT_KEY])
    return out


def require_approver(principal: Principal) -> None:
    """PERMISSION_DENIED unless the principal may decide refunds (the approver role)."""
    require(principal, Operation.DECIDE_REFUND)


def _refund_input(events: list[LogEvent]) -> WorkflowInput | None:
    """The input of a refund workflow (None: no such workflow, or not a refund)."""
    inp = events[0].data.get("input") if events else None
    if not isinstance(inp, dict) or "customer_id" not in inp:
        return None
    return WorkflowInput.model_validate(inp)


def _outcome(snapshot: WorkflowSnapshot) -> dict[str, Any]:
    out: dict[str, Any] = {"status": snapshot.status.value}
    if snapshot.status is Status.COMPLETED:
        out["result"] = final_result(snapshot.result)
    elif snapshot.error is not None:
        # The approver reads what the customer reads: another service's words stay in the log.
        out["error"] = told(snapshot.error, Language.EN).to_dict()
    return out
