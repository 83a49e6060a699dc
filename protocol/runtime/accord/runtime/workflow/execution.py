"""One workflow executing in memory: an actor that owns the workflow's log while it runs.

Everything that changes the workflow goes through the execution's inbox: node results, retry
timers, resume answers, fired timers, cancel. The execution takes every message queued since
its last step, turns them into events, applies them to the state, starts the nodes that
became ready (their node_started events go in the same batch), and appends the batch in ONE
call with its expected version. So a fan-out of three trivial nodes costs one append for the
three outputs and the join's start, and the log has exactly one writer per workflow.

When nothing is running (the workflow waits for an answer, or ended), the execution closes
and the runtime forgets it: a waiting workflow holds no memory. What an execution needs from
its runtime is handed to it as a `Host`; it touches nothing else of the runtime.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any

from opentelemetry.trace import Span
from pydantic import BaseModel

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import Action, decide
from accord.contracts.status import Status
from accord.protocol import telemetry
from accord.protocol.telemetry import bind_task, instruments, spans
from accord.runtime.workflow.clock import Cancelable, Clock
from accord.runtime.workflow.context import InterruptSignal, NodeContext
from accord.runtime.workflow.eventlog import EventLog, VersionConflictError, WorkflowClosedError
from accord.runtime.workflow.events import EventType, NewEvent, encode_json
from accord.runtime.workflow.graph import Graph, Route
from accord.runtime.workflow.observers import Observers
from accord.runtime.workflow.spending import SPENT_FIELD, Tally
from accord.runtime.workflow.state import WorkflowState

logger = logging.getLogger(__name__)


class GoneError(Exception):
    """The execution closed before it handled a message: load the workflow again."""


@dataclass(slots=True)
class _Result:
    node: str
    token: int
    outcome: tuple[Any, str | None, str] | AccordError | InterruptSignal


@dataclass(slots=True)
class _RetryDue:
    node: str
    token: int


@dataclass(slots=True)
class Resume:
    interrupt_id: str
    value: Any
    principal: str | None
    reply: asyncio.Future[None]
    spent: dict[str, int] | None = None  # what the turn that brought the answer paid


@dataclass(slots=True)
class Fire:
    timer_id: str
    reply: asyncio.Future[bool]


@dataclass(slots=True)
class Cancel:
    principal: str | None
    reason: str | None
    reply: asyncio.Future[None]


InboxMessage = _Result | _RetryDue | Resume | Fire | Cancel
_NO_ANSWERS: MappingProxyType[int, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Host:
    """What an execution needs from the runtime that runs it."""

    log: EventLog
    owner: str
    clock: Clock
    hook_timeout_s: float
    observers: Observers
    timer_set: Callable[[float], None]  # a durable timer was set, due at this time
    ended: Callable[[WorkflowExecution], None]  # the execution closed: forget it
    # A lease this execution could not give back (the database was away): the runtime gives
    # it back after a later heartbeat, so that recovery retries the workflow.
    release_later: Callable[[str], None]


class WorkflowExecution:
    def __init__(self, host: Host, graph: Graph, state: WorkflowState, leased: bool) -> None:
        self.host = host
        self.graph = graph
        self.state = state
        self.workflow_id = state.workflow_id
        self.closed = False
        self.lost = False  # another writer took the workflow: our state is stale
        self.done = asyncio.Event()
        self._db_status = state.status()
        self._holds_idle_lease = leased  # leased by acquire/claim and not yet given back
        self._inbox: list[InboxMessage] = []
        self._wake: asyncio.Future[None] | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._contexts: dict[str, NodeContext] = {}
        self._tokens: dict[str, int] = {}
        self._first_start: dict[str, float] = {}
        self._retry_handles: dict[str, Cancelable] = {}
        self._next_token = 0
        self._loop_task: asyncio.Task[None] | None = None
        self._in_step = False
        self._outputs_view = MappingProxyType(state.outputs)  # read-only, always current
        self.tally = Tally(state.spent)  # the state keeps `recorded` current as events apply
        self._stepped: asyncio.Future[None] | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def begin(self, launched: list[str], *, step_first: bool) -> None:
        """Run ``launched`` (already recorded as started), schedule the retries the log shows
        as due later (a workflow loaded after a restart keeps its backoff schedule), and start
        the inbox loop."""
        for node in launched:
            self._launch(node)
        for node, act in self.state.pending.items():
            if act.backoff and act.retry_at is not None and node not in self._retry_handles:
                self._tokens[node] = 0
                self._retry_handles[node] = self.host.clock.call_at(
                    act.retry_at, partial(self.post, _RetryDue(node, 0))
                )
        self._loop_task = asyncio.create_task(
            self._loop(step_first), name=f"workflow:{self.workflow_id}"
        )

    def post(self, message: InboxMessage) -> bool:
        if self.closed:
            return False
        self._inbox.append(message)
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)
        return True

    async def stop(self) -> None:
        """Stop without recording anything (process shutdown): recovery picks it up."""
        if self._loop_task is not None and not self._loop_task.done():
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)

    async def _loop(self, step_first: bool) -> None:
        try:
            if step_first:
                await self._step(self._take())
            while not self.closed:
                if not self._inbox:
                    self._wake = asyncio.get_running_loop().create_future()
                    await self._wake
                    self._wake = None
                await self._step(self._take())
        except WorkflowClosedError:
            # Canceled from elsewhere (another replica or a cold cancel): stop our nodes.
            self.lost = True
            await self._stop_nodes(call_hooks=True)
        except VersionConflictError:
            # Someone else resumed this workflow (our lease had expired): they own it now.
            self.lost = True
            await self._stop_nodes(call_hooks=False)
        except asyncio.CancelledError:  # process shutdown: a step may be half done
            self.lost = True
            await self._stop_nodes(call_hooks=False)
            raise
        except Exception:
            logger.exception("workflow %s: execution failed", self.workflow_id)
            self.lost = True
            await self._stop_nodes(call_hooks=False)
        finally:
            # Refuse new messages first; callers holding one retry through a fresh load,
            # which waits for `done` so that our lease release cannot undo their acquire.
            self.closed = True
            for message in self._take():
                reply = getattr(message, "reply", None)
                if reply is not None and not reply.done():
                    reply.set_exception(GoneError())
            for handle in self._retry_handles.values():
                handle.cancel()
            for task in self._tasks.values():
                task.cancel()
            # Give the lease back unless an append already did: after a failure (say the
            # database went away) the workflow becomes an orphan that recovery retries,
            # here or on another replica. (A lease taken over by someone else is theirs:
            # release only clears our own.)
            if self._holds_idle_lease or self.lost:
                try:
                    await self.host.log.release(self.workflow_id, self.host.owner)
                except AccordError:
                    # Held by this live process, the workflow would be no one's orphan and
                    # stay running forever (its heartbeat goes on): given back later.
                    logger.warning(
                        "workflow %s: could not release its lease; retried after the next "
                        "heartbeat",
                        self.workflow_id,
                    )
                    self.host.release_later(self.workflow_id)
            self.host.ended(self)
            self.done.set()
            if self._stepped is not None and not self._stepped.done():
                self._stepped.set_result(None)

    def _take(self) -> list[InboxMessage]:
        messages, self._inbox = self._inbox, []
        return messages

    # -- one step: messages -> events -> one append -> effects ------------------------------
    async def durable(self) -> None:
        """Wait until the state in memory is all in the log (no step half done).

        A step applies its events to the state before it appends them, so between the two the
        state is ahead of the log; snapshots wait here so that they never show what a crash
        could still undo.
        """
        while self._in_step and not self.closed:
            if self._stepped is None:
                self._stepped = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._stepped)

    async def _step(self, messages: list[InboxMessage]) -> None:
        self._in_step = True
        try:
            await self._step_once(messages)
        finally:
            self._in_step = False
            stepped, self._stepped = self._stepped, None
            if stepped is not None and not stepped.done():
                stepped.set_result(None)

    async def _step_once(self, messages: list[InboxMessage]) -> None:
        state = self.state
        base = state.version
        events: list[NewEvent] = []
        after: list[tuple[asyncio.Future[Any], Any]] = []
        retries: list[tuple[str, float]] = []  # (node, when its next attempt is due)
        timers: list[float] = []
        hooks: list[NodeContext] = []
        for message in messages:
            if state.finished is not None:
                _reply_error(
                    message, AccordError(ErrorCode.UNSUPPORTED_OPERATION, "the workflow has ended")
                )
                continue
            if isinstance(message, _Result):
                self._on_result(message, events, retries, timers)
            elif isinstance(message, _RetryDue):
                act = state.pending.get(message.node)
                if (
                    act is not None
                    and act.backoff
                    and self._tokens.get(message.node) == message.token
                ):
                    act.backoff = False
                self._retry_handles.pop(message.node, None)
            elif isinstance(message, Resume):
                self._on_resume(message, events, after)
            elif isinstance(message, Fire):
                self._on_fire(message, events, after)
            else:
                hooks = await self._on_cancel(message, events, after)

        launched: list[str] = []
        if state.finished is None and state.failure is None:
            for node in state.startable():
                attempt = state.pending[node].attempt + 1
                data = {"attempt": attempt}
                encoded = f'{{"attempt":{attempt}}}'
                self._emit(events, NewEvent(EventType.NODE_STARTED, node, data, encoded))
                launched.append(node)
        if state.finished is None and state.failure is not None:
            hooks = [self._contexts[n] for n in self._tasks if n in self._contexts]
            await self._stop_nodes(call_hooks=False)
            self._emit(
                events,
                NewEvent(
                    EventType.WORKFLOW_FINISHED,
                    None,
                    {
                        "status": Status.FAILED.value,
                        "error": state.failure.to_dict(),
                        **self._unrecorded(),
                    },
                ),
            )
        elif state.finished is None and not state.pending:
            self._emit(
                events,
                NewEvent(
                    EventType.WORKFLOW_FINISHED,
                    None,
                    {"status": Status.COMPLETED.value, "outputs": state.sink_outputs()},
                ),
            )

        if events:
            status = state.status()
            changed = status if status is not self._db_status else None
            appended = await self.host.log.append(self.workflow_id, base, events, status=changed)
            self._db_status = status
            if status is not Status.RUNNING:
                self._holds_idle_lease = False  # the append released it
            if self.host.observers:
                await self.host.observers.notify(appended)
        for node in launched:
            self._launch(node)
        for node, retry_at in retries:
            token = self._tokens[node]
            self._retry_handles[node] = self.host.clock.call_at(
                retry_at, partial(self.post, _RetryDue(node, token))
            )
        for due_at in timers:
            self.host.timer_set(due_at)
        for future, value in after:
            if not future.done():
                future.set_result(value)
        for ctx in hooks:
            await self._hook(ctx)
        if state.finished is not None:  # ended: pending retries will never run
            for handle in self._retry_handles.values():
                handle.cancel()
            self._retry_handles.clear()
        idle = not self._tasks and not self._retry_handles and not self._inbox
        if idle and (state.finished is not None or state.status() is not Status.RUNNING):
            self.closed = True

    def _unrecorded(self) -> dict[str, Any]:
        """What the attempts just stopped had spent and not recorded: the closing event keeps
        it (spending.py), so stopping a node never hides what it spent."""
        left = {k: v for k, v in self.tally.running.items() if v}
        self.tally.settle(left)
        return {SPENT_FIELD: left} if left else {}

    def _emit(self, events: list[NewEvent], event: NewEvent) -> None:
        self.state.apply(event)
        events.append(event)

    def _on_result(
        self,
        message: _Result,
        events: list[NewEvent],
        retries: list[tuple[str, float]],
        timers: list[float],
    ) -> None:
        node = message.node
        if self._tokens.get(node) != message.token or node not in self._tasks:
            return  # a canceled attempt reporting late
        del self._tasks[node]
        ctx = self._contexts.pop(node, None)
        spent = {k: v for k, v in ctx.spent.items() if v} if ctx is not None else {}
        # The attempt's spending goes into the event that ends it (and leaves `running`).
        self.tally.settle(spent)
        paid: dict[str, Any] = {SPENT_FIELD: spent} if spent else {}
        outcome = message.outcome
        act = self.state.pending[node]
        if isinstance(outcome, tuple):
            value, label, encoded = outcome
            self._first_start.pop(node, None)
            label_json = encode_json(label) if label is not None else "null"
            paid_json = f',"{SPENT_FIELD}":{encode_json(spent)}' if spent else ""
            self._emit(
                events,
                NewEvent(
                    EventType.NODE_OUTPUT,
                    node,
                    {"output": value, "label": label, **paid},
                    f'{{"output":{encoded},"label":{label_json}{paid_json}}}',
                ),
            )
        elif isinstance(outcome, AccordError):
            now = self.host.clock.now()
            elapsed_ms = int((now - self._first_start.get(node, now)) * 1000)
            decision = decide(
                outcome.code,
                max(1, act.attempt),
                elapsed_ms,
                self.graph.nodes[node].retry,
                remaining_ms=self._remaining_ms(now),
            )
            data: dict[str, Any] = {"error": outcome.to_dict(), "attempt": act.attempt, **paid}
            if decision.action is Action.RETRY:
                retry_at = now + decision.delay_ms / 1000
                data["retry_in_ms"] = decision.delay_ms
                data["retry_at"] = retry_at  # the schedule is in the log, not only in memory
                retries.append((node, retry_at))
            else:
                data["final"] = True
                data["action"] = decision.action.value
                self._first_start.pop(node, None)
            self._emit(events, NewEvent(EventType.NODE_FAILED, node, data))
        else:
            interrupt_id = uuid.uuid4().hex
            data = {
                "interrupt_id": interrupt_id,
                "index": outcome.index,
                "reason": outcome.reason.value,
                "payload": outcome.payload,
                **paid,
            }
            timer: NewEvent | None = None
            if outcome.timeout_s is not None:
                timer_id = uuid.uuid4().hex
                due_at = self.host.clock.now() + outcome.timeout_s
                data.update(timer_id=timer_id, due_at=due_at)
                timer = NewEvent(
                    EventType.TIMER_SET,
                    node,
                    {"timer_id": timer_id, "interrupt_id": interrupt_id, "due_at": due_at},
                )
                timers.append(due_at)
            self._emit(events, NewEvent(EventType.INTERRUPTED, node, data))
            if timer is not None:
                self._emit(events, timer)

    def _remaining_ms(self, now: float) -> int | None:
        """What is left of the request's deadline (None: the graph knows of none)."""
        if self.graph.deadline_of is None:
            return None
        deadline = self.graph.deadline_of(self.state.input)
        return None if deadline is None else max(0, int((deadline - now) * 1000))

    def _on_resume(
        self, message: Resume, events: list[NewEvent], after: list[tuple[asyncio.Future[Any], Any]]
    ) -> None:
        pending = self.state.interrupts.get(message.interrupt_id)
        if pending is None and message.interrupt_id in self.state.expired:
            # Its timer fired before this answer came: refused as below, and said why.
            _reply_error(message, _timed_out(message.interrupt_id))
            return
        if pending is None:
            _reply_error(
                message,
                AccordError(
                    ErrorCode.NOT_FOUND,
                    "no such pending interrupt",
                    {"interrupt_id": message.interrupt_id},
                ),
            )
            return
        if pending.due_at is not None and self.host.clock.now() >= pending.due_at:
            # Its timeout passed and the timer has not fired yet (the scheduler looks later, or
            # another replica set it): the wait is over whoever answers now. The timer fires
            # here, as it would have, and the answer is refused: nothing it asked for happens
            # after the wait it answers has ended (a late approval acts on nothing, ENV-009).
            self._emit(
                events,
                NewEvent(
                    EventType.TIMER_FIRED,
                    pending.node,
                    {"timer_id": pending.timer_id, "interrupt_id": pending.interrupt_id},
                ),
            )
            _reply_error(message, _timed_out(message.interrupt_id))
            return
        data: dict[str, Any] = {
            "interrupt_id": message.interrupt_id,
            "value": message.value,
            "principal": message.principal,
        }
        if pending.timer_id is not None:
            data["timer_id"] = pending.timer_id
        if message.spent:
            data[SPENT_FIELD] = dict(message.spent)
        self._emit(events, NewEvent(EventType.RESUMED, pending.node, data))
        after.append((message.reply, None))

    def _on_fire(
        self, message: Fire, events: list[NewEvent], after: list[tuple[asyncio.Future[Any], Any]]
    ) -> None:
        found = next(
            (p for p in self.state.interrupts.values() if p.timer_id == message.timer_id), None
        )
        if found is None:
            after.append((message.reply, False))
            return
        self._emit(
            events,
            NewEvent(
                EventType.TIMER_FIRED,
                found.node,
                {"timer_id": message.timer_id, "interrupt_id": found.interrupt_id},
            ),
        )
        after.append((message.reply, True))

    async def _on_cancel(
        self, message: Cancel, events: list[NewEvent], after: list[tuple[asyncio.Future[Any], Any]]
    ) -> list[NodeContext]:
        # Order: stop the node tasks, let each node cancel what it started (child A2A tasks),
        # then record `canceled`; after it the log refuses every append.
        await self._stop_nodes(call_hooks=True)
        for ctx in self.state.waiting_contexts():
            await self._hook(ctx)
        self._emit(
            events,
            NewEvent(
                EventType.CANCELED,
                None,
                {"principal": message.principal, "reason": message.reason, **self._unrecorded()},
            ),
        )
        after.append((message.reply, None))
        return []

    # -- nodes ------------------------------------------------------------------------------
    async def _ensure_open(self) -> None:
        """NodeContext.ensure_open: one row read. Another replica's cancel closes the log
        without this process knowing until its next append is refused; a node about to write
        outside the log (a payment) asks first, so a canceled workflow makes no new write."""
        record = await self.host.log.record(self.workflow_id)
        if self.closed or (record is not None and record.closed and self.state.finished is None):
            raise AccordError(
                ErrorCode.CANCELED,
                "the workflow ended elsewhere (canceled through another replica)",
                {"workflow_id": self.workflow_id},
            )

    def _launch(self, node: str) -> None:
        act = self.state.pending[node]
        ctx = NodeContext(
            workflow_id=self.workflow_id,
            node=node,
            input=self.state.input,
            inputs=act.inputs,
            outputs=self._outputs_view,
            attempt=act.attempt,
            answers=dict(act.answers) if act.answers else _NO_ANSWERS,
            timed_out=frozenset(act.timed_out) if act.timed_out else frozenset(),
            error=act.error,
            tally=self.tally,
            ensure_open=self._ensure_open,
        )
        self._next_token += 1
        token = self._next_token
        self._tokens[node] = token
        self._contexts[node] = ctx
        now = self.host.clock.now()
        self._first_start.setdefault(node, now)
        timeout_s = self.graph.nodes[node].timeout_s
        # The deadline counts from the node_started append, not from when its task first runs.
        deadline = None if timeout_s is None else now + timeout_s
        self._tasks[node] = asyncio.create_task(self._run_node(node, token, ctx, deadline))

    async def _run_node(
        self, node: str, token: int, ctx: NodeContext, deadline: float | None
    ) -> None:
        spec = self.graph.nodes[node]
        outcome: tuple[Any, str | None, str] | AccordError | InterruptSignal
        # One span per node attempt, under whatever was current when the workflow was started
        # or resumed (the request that did it); its calls to agents and tools hang under it.
        with (
            bind_task(self.workflow_id),
            telemetry.span(
                f"workflow.node {node}",
                attributes={
                    spans.WORKFLOW_ID: self.workflow_id,
                    spans.NODE: node,
                    spans.ATTEMPT: ctx.attempt,
                },
            ) as span,
        ):
            try:
                if deadline is None:
                    value = await spec.fn(ctx)
                else:
                    value = await self._with_deadline(spec.fn(ctx), deadline, node)
                outcome = self._as_output(node, value)
            except InterruptSignal as signal:
                outcome = signal
            except AccordError as error:
                outcome = error
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("workflow %s: node %s raised", self.workflow_id, node)
                outcome = AccordError(
                    ErrorCode.INTERNAL, "the node failed unexpectedly", {"node": node}
                )
            _describe(span, node, outcome)
        self.post(_Result(node, token, outcome))

    async def _with_deadline(self, running: Awaitable[Any], deadline: float, node: str) -> Any:
        try:
            async with self.host.clock.timeout_at(deadline):
                return await running
        except TimeoutError:
            raise AccordError(
                ErrorCode.RETRYABLE_TIMEOUT,
                "the node did not finish in time",
                {"node": node, "timeout_s": self.graph.nodes[node].timeout_s},
            ) from None

    def _as_output(self, node: str, value: Any) -> tuple[Any, str | None, str] | AccordError:
        if isinstance(value, Route):
            output, label = value.output, value.label
        elif node in self.graph.routes and isinstance(value, str):
            output, label = value, value
        else:
            output, label = value, None
        if isinstance(output, BaseModel):  # typed outputs are logged (and read back) as JSON
            output = output.model_dump(mode="json")
        try:
            encoded = encode_json(output)
        except (TypeError, ValueError):
            return AccordError(
                ErrorCode.CONTRACT_VIOLATION, "a node output must be JSON", {"node": node}
            )
        return output, label, encoded

    async def _stop_nodes(self, *, call_hooks: bool) -> None:
        tasks = dict(self._tasks)
        contexts = [self._contexts[n] for n in tasks if n in self._contexts]
        self._tasks.clear()
        self._contexts.clear()
        for task in tasks.values():
            task.cancel()
        if tasks:
            with contextlib.suppress(TimeoutError):
                async with self.host.clock.timeout(self.host.hook_timeout_s):
                    await asyncio.wait(tasks.values())
        if call_hooks:
            for ctx in contexts:
                await self._hook(ctx)

    async def _hook(self, ctx: NodeContext) -> None:
        hook = self.graph.nodes[ctx.node].on_cancel
        if hook is None:
            return
        try:
            async with self.host.clock.timeout(self.host.hook_timeout_s):
                await hook(ctx)
        except Exception:
            logger.exception("workflow %s: cancel hook of %s failed", self.workflow_id, ctx.node)


def _describe(
    span: Span, node: str, outcome: tuple[Any, str | None, str] | AccordError | InterruptSignal
) -> None:
    """The attempt's outcome on its span and in the node metric (error.type: the code)."""
    measured: dict[str, str] = {spans.NODE: node}
    if isinstance(outcome, AccordError):
        telemetry.mark_error(span, outcome.code)
        measured[spans.ERROR_TYPE] = outcome.code.value
    elif isinstance(outcome, InterruptSignal):
        span.set_attribute("accord.workflow.interrupt", outcome.reason.value)
    elif outcome[1] is not None:
        span.set_attribute("accord.workflow.route", outcome[1])
    instruments.workflow_nodes.add(1, measured)


def _timed_out(interrupt_id: str) -> AccordError:
    return AccordError(
        ErrorCode.NOT_FOUND,
        "no such pending interrupt: its timeout passed",
        {"interrupt_id": interrupt_id, "timed_out": True},
    )


def _reply_error(message: InboxMessage, error: AccordError) -> None:
    reply = getattr(message, "reply", None)
    if reply is not None and not reply.done():
        reply.set_exception(error)
