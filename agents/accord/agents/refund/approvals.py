"""Approvals: skill refund.approve, and GET /approvals (the queue of pending approvals).

An approver cannot address the customer's task (it belongs to the customer), so they send a
NEW message with skill ``refund.approve`` and ``{task_id, decision, note}``; the orchestrator
resumes that workflow itself. Rules, in this order:

- the principal lacks the ``approver`` role                      -> PERMISSION_DENIED
- no workflow with that id                                        -> NOT_FOUND
- the approver is the customer of that workflow                   -> PERMISSION_DENIED
- the workflow is not waiting for an approval                     -> INVALID_INPUT

The outcome is then projected into the customer's task (projection.py). The queue lists every
pending approval interrupt; approvals always carry a timeout, so the log's durable timers are
the index (no second table to keep in step).
"""

from __future__ import annotations

import time
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse

from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.projection import Projector, final_result
from accord.agents.workflow import Runtime, WorkflowSnapshot
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.executor import Completed, Turn
from accord.protocol.a2a.server_gate import PrincipalUser
from accord.protocol.auth import ROLE_APPROVER, Principal

APPROVE_SKILL: Final = "refund.approve"
APPROVALS_PATH: Final = "/approvals"
QUEUE_LIMIT: Final = 500
_FAR_FUTURE_S: Final = 100 * 365 * 86400.0


class Approvals:
    def __init__(self, runtime: Runtime, projector: Projector) -> None:
        self.runtime = runtime
        self.projector = projector

    async def decide(self, turn: Turn) -> Completed:
        principal = turn.principal
        _require_approver(principal)
        data = turn.data or {}
        task_id = str(data.get("task_id") or "")
        decision = str(data.get("decision") or "")
        note = str(data.get("note") or "")
        snapshot = await self._snapshot(task_id)
        inp = await self._input(task_id)
        if principal.subject == inp.customer_id and principal.app == inp.app:
            raise AccordError(
                ErrorCode.PERMISSION_DENIED,
                "a customer cannot approve their own refund",
                {"task_id": task_id},
            )
        pending = next((p for p in snapshot.interrupts if p.reason is WaitingReason.APPROVAL), None)
        if pending is None:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                "this refund is not waiting for an approval",
                {"task_id": task_id, "status": snapshot.status.value},
            )
        value = {"decision": decision, "note": note, "approver": principal.subject}
        handle = await self.runtime.resume(task_id, pending.interrupt_id, value, principal.subject)
        after = await handle.settled()
        projecting = self.projector.schedule(task_id)  # the customer's task shows the outcome
        if projecting is not None:
            await projecting
        return Completed(
            data={"task_id": task_id, "decision": decision, "outcome": _outcome(after)},
            text=f"{decision} recorded for task {task_id}",
        )

    async def queue(self) -> list[dict[str, Any]]:
        """Every pending approval: task id, interrupt id, due time, and the facts."""
        timers = await self.runtime.log.due_timers(time.time() + _FAR_FUTURE_S, QUEUE_LIMIT)
        items: list[dict[str, Any]] = []
        for workflow_id in dict.fromkeys(t.workflow_id for t in timers):
            try:
                snapshot = await self.runtime.snapshot(workflow_id)
            except AccordError:
                continue
            for pending in snapshot.interrupts:
                if pending.reason is WaitingReason.APPROVAL:
                    items.append(
                        {
                            "task_id": workflow_id,
                            "interrupt_id": pending.interrupt_id,
                            "due_at": pending.due_at,
                            "facts": pending.payload,
                        }
                    )
        return items

    async def list_route(self, request: Request) -> JSONResponse:
        """GET /approvals (behind the gate: authenticated); approver role required."""
        user = request.scope.get("user")
        try:
            if not isinstance(user, PrincipalUser):
                raise AccordError(ErrorCode.UNAUTHENTICATED)
            _require_approver(user.principal)
            return JSONResponse({"approvals": await self.queue()})
        except AccordError as error:
            status, body = error.to_http()
            return JSONResponse(body, status_code=status)

    async def _snapshot(self, task_id: str) -> WorkflowSnapshot:
        try:
            return await self.runtime.snapshot(task_id)
        except AccordError as error:
            if error.code is ErrorCode.NOT_FOUND:
                raise AccordError(
                    ErrorCode.NOT_FOUND, "no refund task with that id", {"task_id": task_id}
                ) from None
            raise

    async def _input(self, task_id: str) -> WorkflowInput:
        events = await self.runtime.log.read(task_id)
        return WorkflowInput.model_validate(events[0].data.get("input"))


def _require_approver(principal: Principal) -> None:
    if not principal.has_role(ROLE_APPROVER):
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            "only a principal with the approver role may decide a refund",
            {"requires_role": ROLE_APPROVER},
        )


def _outcome(snapshot: WorkflowSnapshot) -> dict[str, Any]:
    out: dict[str, Any] = {"status": snapshot.status.value}
    if snapshot.status is Status.COMPLETED:
        out["result"] = final_result(snapshot)
    elif snapshot.error is not None:
        out["error"] = snapshot.error.to_dict()
    return out
