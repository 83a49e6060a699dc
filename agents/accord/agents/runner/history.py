"""Reading a session back: its events and state, from the workflow log (after ADK's
``SessionService.get_session`` / ``list_sessions``).

A session is turns 1..n of (app, user, session), each one workflow (sessions.py). Its events
are rebuilt from the log, so a new Runner (or another process on the same log) reads the same
history: each customer message (the workflow's start, each answer) opens an invocation; node
progress follows as ``thought`` events as ``run_async`` streamed them; each question asked is
an ``orchestrator`` event with status ``waiting``, and a finished workflow ends with its final
event. Tool and agent calls are not in the log (the ledgers and child tasks keep them), so the
history has no ``function_call`` parts: that is the one difference from the live stream.

``state`` is what the session established, for the embedding program to read: its turn, the
current workflow and its status, and the last decision or the pending question.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from accord.agents.refund.conversation import final_result
from accord.agents.refund.facts import answer_text
from accord.agents.runner.events import Content, Event, Part, Usage
from accord.agents.runner.hub import ORCHESTRATOR
from accord.agents.runner.sessions import SessionKey, Sessions
from accord.agents.runner.translate import final_event, progress_parts
from accord.contracts.status import Status, WaitingReason
from accord.protocol.auth import owner_key
from accord.runtime.workflow import EventType, LogEvent, Runtime

USER: Final = "user"
APPROVER: Final = "approver"
LIST_LIMIT: Final = 1000


class Session(BaseModel):
    """One conversation: ``id`` is the session id the embedding program chose."""

    model_config = ConfigDict(frozen=True)

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = 0.0


class SessionService:
    """The Runner's sessions, read from its workflow log (``runner.session_service``)."""

    def __init__(self, runtime: Runtime, sessions: Sessions) -> None:
        self._runtime = runtime
        self._sessions = sessions

    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Session | None:
        """The session with its events and state; None if it has no workflow yet."""
        key = SessionKey(app_name, user_id, session_id)
        turns = await self._sessions.current(key)
        if turns == 0:
            return None
        events: list[Event] = []
        for turn in range(1, turns + 1):
            events += await self._events(key.workflow_id(turn))
        state = await self._state(key, turns)
        updated = max((e.timestamp for e in events), default=0.0)
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=state,
            events=events,
            last_update_time=updated,
        )

    async def list_sessions(self, *, app_name: str, user_id: str) -> list[Session]:
        """The user's sessions in this app, most recently updated first, without their
        events (as in ADK; ``get_session`` reads them)."""
        records, _ = await self._runtime.log.list_workflows(
            owner_key(app_name, user_id), limit=LIST_LIMIT
        )
        seen: dict[str, float] = {}
        for record in records:  # newest first: the first record of a session is its latest
            if record.context_id is not None and record.context_id not in seen:
                key = SessionKey(app_name, user_id, record.context_id)
                if key.owns(record.workflow_id):  # a Runner session's, not another task's
                    seen[record.context_id] = record.updated_at
        found: list[Session] = []
        for session_id, updated in seen.items():
            key = SessionKey(app_name, user_id, session_id)
            state = await self._state(key, await self._sessions.current(key))
            found.append(
                Session(
                    id=session_id,
                    app_name=app_name,
                    user_id=user_id,
                    state=state,
                    last_update_time=updated,
                )
            )
        return found

    async def _state(self, key: SessionKey, turns: int) -> dict[str, Any]:
        workflow_id = key.workflow_id(turns)
        snapshot = await self._runtime.snapshot(workflow_id)
        state: dict[str, Any] = {
            "turns": turns,
            "workflow_id": workflow_id,
            "status": snapshot.status.value,
        }
        if snapshot.status is Status.COMPLETED:
            result = final_result(snapshot.result)
            state.update(decision=result.get("decision"), order_id=result.get("order_id"))
        elif snapshot.status is Status.WAITING and snapshot.interrupts:
            pending = snapshot.interrupts[0]
            state["waiting_reason"] = pending.reason.value
            if pending.reason is WaitingReason.INPUT and isinstance(pending.payload, dict):
                state["question"] = pending.payload.get("question")
        elif snapshot.status is Status.FAILED and snapshot.error is not None:
            state["error"] = snapshot.error.code.value
        return state

    async def _events(self, workflow_id: str) -> list[Event]:
        log = await self._runtime.log.read(workflow_id)
        out: list[Event] = []
        invocation = workflow_id
        for entry in log:
            said = _said(entry)
            if said is not None:
                invocation = f"{workflow_id}:{entry.seq}"
                author, text = said
                out.append(_event(invocation, author, entry, [Part.text_of(text)] if text else []))
                continue
            if entry.type is EventType.INTERRUPTED:
                question = _question(entry)
                if question is not None:
                    out.append(
                        _event(
                            invocation,
                            ORCHESTRATOR,
                            entry,
                            [Part.text_of(question)],
                            status=Status.WAITING,
                        )
                    )
                    continue
            parts = progress_parts(entry)
            if parts is not None:
                out.append(_event(invocation, entry.node or ORCHESTRATOR, entry, parts))
        if log and log[-1].type is EventType.WORKFLOW_FINISHED:
            snapshot = await self._runtime.snapshot(workflow_id)
            final = final_event(snapshot, invocation, Usage())
            ended = log[-1]
            out.append(final.model_copy(update={"id": _event_id(ended), "timestamp": ended.at}))
        return out


def _said(entry: LogEvent) -> tuple[str, str] | None:
    """A message someone sent: the request that started the workflow, or an answer."""
    if entry.type is EventType.WORKFLOW_STARTED:
        given = entry.data.get("input") or {}
        return USER, str(given.get("text") or "")
    if entry.type is EventType.RESUMED:
        value = entry.data.get("value")
        if isinstance(value, dict) and "decision" in value:  # an approver's decision
            return APPROVER, str(value.get("decision") or "")
        return USER, answer_text(value)
    return None


def _question(entry: LogEvent) -> str | None:
    if entry.data.get("reason") != WaitingReason.INPUT.value:
        return None
    payload = entry.data.get("payload")
    question = payload.get("question") if isinstance(payload, dict) else None
    return str(question) if question else None


def _event_id(entry: LogEvent) -> str:
    """Stable: the same log entry reads back as the same event, in any Runner."""
    return f"{entry.workflow_id}:{entry.seq}"


def _event(
    invocation: str,
    author: str,
    entry: LogEvent,
    parts: list[Part],
    *,
    status: Status | None = None,
) -> Event:
    return Event(
        id=_event_id(entry),
        invocation_id=invocation,
        author=author,
        content=Content(role=USER if author in (USER, APPROVER) else "model", parts=parts),
        timestamp=entry.at,
        status=status,
        workflow_id=entry.workflow_id,
    )
