"""The durable workflow runtime: start, resume, cancel, recover, observe.

    runtime = Runtime("sqlite:///data/agent.db")
    runtime.register(review_graph)
    async with runtime:
        handle = await runtime.start("review", workflow_id=task_id, input={...})
        snapshot = await handle.settled()         # completed, failed, or waiting
        await runtime.resume(task_id, snapshot.interrupts[0].interrupt_id, "approve", "u:7")

Durability comes from the event log: a workflow's state is rebuilt from its events, finished
nodes are never run again, a node that started and did not finish runs again. See
docs/workflow.md for what that asks of node authors.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.runtime.workflow.clock import SYSTEM_CLOCK, Clock
from accord.runtime.workflow.eventlog import (
    EventLog,
    VersionConflictError,
    graph_key,
    open_event_log,
)
from accord.runtime.workflow.events import EventType, LogEvent, NewEvent, Timer, encode_json
from accord.runtime.workflow.execution import (
    Cancel,
    Fire,
    GoneError,
    Host,
    Resume,
    WorkflowExecution,
)
from accord.runtime.workflow.graph import Graph
from accord.runtime.workflow.leases import LeaseKeeper
from accord.runtime.workflow.observers import Observer, Observers
from accord.runtime.workflow.retention import Retention
from accord.runtime.workflow.spending import SPENT_FIELD
from accord.runtime.workflow.state import PendingInterrupt, WorkflowState
from accord.runtime.workflow.timers import TimerScheduler

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WorkflowSnapshot:
    """Where a workflow stands: status, outputs so far, pending interrupts, error."""

    workflow_id: str
    graph: str
    version: str
    status: Status
    outputs: dict[str, Any]
    result: dict[str, Any]  # outputs of the last nodes (sinks) that ran
    interrupts: list[PendingInterrupt]
    error: AccordError | None
    log_version: int
    spent: dict[str, int] = field(default_factory=dict)  # by kind, over the whole log


class WorkflowHandle:
    """A started (or resumed) workflow."""

    def __init__(
        self, runtime: Runtime, workflow_id: str, execution: WorkflowExecution | None
    ) -> None:
        self.runtime = runtime
        self.workflow_id = workflow_id
        self._execution = execution

    async def settled(self, timeout_s: float | None = None) -> WorkflowSnapshot:
        """Wait until the workflow completes, fails or waits for an answer.

        This waits for a workflow running in this process; for one running elsewhere (another
        replica started it) it returns its current snapshot from the log at once.
        ``timeout_s`` is the caller's own bound, in real time (not the runtime's clock).
        """
        execution = self._execution
        if execution is not None:
            if timeout_s is None:
                await execution.done.wait()
            else:
                async with asyncio.timeout(timeout_s):
                    await execution.done.wait()
            if not execution.lost:
                return _snapshot(execution.graph, execution.state)
        return await self.runtime.snapshot(self.workflow_id)


class Runtime:
    def __init__(
        self,
        log: EventLog | str,
        *,
        owner: str | None = None,
        lease_ttl_s: float = 15.0,
        auto_recover: bool = True,
        timer_rescan_s: float = 5.0,
        hook_timeout_s: float = 10.0,
        clock: Clock | None = None,
        retention_s: float | None = None,
    ) -> None:
        self.log = open_event_log(log) if isinstance(log, str) else log
        self.owner = owner or uuid.uuid4().hex
        self.lease_ttl_s = lease_ttl_s
        self.hook_timeout_s = hook_timeout_s
        self.clock = clock or SYSTEM_CLOCK
        self._auto_recover = auto_recover
        self.retention_s = retention_s
        self._graphs: dict[str, Graph] = {}
        self._latest: dict[str, Graph] = {}
        self._live: dict[str, WorkflowExecution] = {}
        # Leases of failed executions not given back yet (the database was away).
        self._unreleased: set[str] = set()
        self._observers = Observers()
        self._timers = TimerScheduler(
            self.log, self._fire_timer, self.clock, rescan_s=timer_rescan_s
        )
        self._leases = LeaseKeeper(self.log, self.owner, lease_ttl_s, self.clock, self._after_beat)
        self._host = Host(
            log=self.log,
            owner=self.owner,
            clock=self.clock,
            hook_timeout_s=hook_timeout_s,
            observers=self._observers,
            timer_set=self._timers.timer_set,
            ended=self._forget,
            release_later=self._unreleased.add,
        )
        self._background: list[asyncio.Task[None]] = []
        self._open = False

    # -- graphs -----------------------------------------------------------------------------
    def register(self, graph: Graph) -> None:
        """Validate and register a graph version. Keep old versions registered while
        workflows started on them may still be in flight."""
        graph.validate()
        self._graphs[graph.key] = graph
        self._latest[graph.name] = graph

    def _graph(self, name: str, version: str | None) -> Graph:
        graph = (
            self._graphs.get(graph_key(name, version))
            if version is not None
            else self._latest.get(name)
        )
        if graph is None:
            raise AccordError(
                ErrorCode.VERSION_UNSUPPORTED,
                "this runtime does not have that workflow graph version",
                {"graph": name, "version": version},
            )
        return graph

    # -- lifecycle --------------------------------------------------------------------------
    async def open(self) -> None:
        if self._open:
            return
        self._open = True
        await self.log.open()
        await self._leases.beat()
        self._background = [
            asyncio.create_task(self._leases.run(), name="workflow-leases"),
            asyncio.create_task(self._timers.run(), name="workflow-timers"),
        ]
        if self.retention_s is not None:
            retention = Retention(self.log, self.retention_s, self.clock)
            self._background.append(asyncio.create_task(retention.run(), name="workflow-retention"))
        if self._auto_recover:
            await self.recover()

    async def close(self) -> None:
        """Stop without recording anything: in-flight workflows are recovered later."""
        if not self._open:
            return
        self._open = False
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._background = []
        for execution in list(self._live.values()):
            await execution.stop()
        try:
            await self.log.drop_owner(self.owner)
        finally:
            await self.log.close()

    async def __aenter__(self) -> Runtime:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the API ----------------------------------------------------------------------------
    async def start(
        self,
        graph: str,
        workflow_id: str,
        input: Any = None,
        *,
        version: str | None = None,
        scope: str | None = None,
        context_id: str | None = None,
        spent: dict[str, int] | None = None,
    ) -> WorkflowHandle:
        """Start a workflow; the same id again is the same run (its handle is returned).
        ``scope`` and ``context_id`` are what the log lists it under (``list_workflows``);
        ``spent``, what the request that starts it paid (recorded with the start, spending.py)."""
        spec = self._graph(graph, version)
        live = self._live.get(workflow_id)
        if live is not None:
            _same_input(workflow_id, live.state.input, input)
            return WorkflowHandle(self, workflow_id, live)
        input_json = _check_json(input, "input")
        state = WorkflowState(workflow_id, spec)
        start = spec.start or ""
        paid = {k: v for k, v in (spent or {}).items() if v}
        paid_json = f',"{SPENT_FIELD}":{encode_json(paid)}' if paid else ""
        events = [
            NewEvent(
                EventType.WORKFLOW_STARTED,
                None,
                {
                    "graph": spec.name,
                    "version": spec.version,
                    "input": input,
                    **({SPENT_FIELD: paid} if paid else {}),
                },
                f'{{"graph":{encode_json(spec.name)},"version":{encode_json(spec.version)},'
                f'"input":{input_json}{paid_json}}}',
            ),
            NewEvent(EventType.NODE_STARTED, start, {"attempt": 1}, '{"attempt":1}'),
        ]
        for event in events:
            state.apply(event)
        execution = WorkflowExecution(self._host, spec, state, leased=False)
        self._live[workflow_id] = execution
        try:
            appended = await self.log.append(
                workflow_id,
                0,
                events,
                status=Status.RUNNING,
                owner=self.owner,
                scope=scope,
                context_id=context_id,
            )
        except VersionConflictError:
            if self._live.get(workflow_id) is execution:
                del self._live[workflow_id]
            existing = await self.log.read(workflow_id)
            if existing:
                _same_input(workflow_id, existing[0].data.get("input"), input)
            return WorkflowHandle(self, workflow_id, self._live.get(workflow_id))
        except BaseException:
            if self._live.get(workflow_id) is execution:
                del self._live[workflow_id]
            raise
        await self._notify(appended)
        execution.begin([start], step_first=False)
        return WorkflowHandle(self, workflow_id, execution)

    async def record_refused(
        self,
        graph: str,
        workflow_id: str,
        input: Any,
        error: AccordError,
        *,
        scope: str | None = None,
        context_id: str | None = None,
    ) -> None:
        """Record a workflow that failed before its first node ran (its request was refused):
        started and finished in one append, so it can be read and listed like any other. The
        same id again records nothing."""
        spec = self._graph(graph, None)
        _check_json(input, "input")
        events = [
            NewEvent(
                EventType.WORKFLOW_STARTED,
                None,
                {"graph": spec.name, "version": spec.version, "input": input},
            ),
            NewEvent(
                EventType.WORKFLOW_FINISHED,
                None,
                {"status": Status.FAILED.value, "outputs": {}, "error": error.to_dict()},
            ),
        ]
        try:
            appended = await self.log.append(
                workflow_id, 0, events, status=Status.FAILED, scope=scope, context_id=context_id
            )
        except VersionConflictError:
            return
        await self._notify(appended)

    def replay(self, events: list[LogEvent]) -> WorkflowSnapshot:
        """The snapshot of a workflow from its events (read by the caller)."""
        graph = self._graph_of(events[0])
        return _snapshot(graph, _replay(events[0].workflow_id, graph, events))

    async def resume(
        self,
        workflow_id: str,
        interrupt_id: str,
        value: Any,
        principal: str | None = None,
        *,
        spent: dict[str, int] | None = None,
    ) -> WorkflowHandle:
        """Answer an interrupt; its node runs again with the answer. ``spent``: what the turn
        that brought the answer paid (recorded with it, spending.py)."""
        _check_json(value, "value")
        for _ in range(5):
            execution = await self._load(workflow_id)
            reply: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if not execution.post(Resume(interrupt_id, value, principal, reply, spent)):
                continue
            try:
                await reply
            except GoneError:
                continue
            return WorkflowHandle(self, workflow_id, execution)
        raise AccordError(
            ErrorCode.UNAVAILABLE, "the workflow is busy; try again", {"workflow_id": workflow_id}
        )

    async def cancel(
        self, workflow_id: str, principal: str | None = None, reason: str | None = None
    ) -> None:
        """Cancel: stop running nodes, call their cancel hooks, record `canceled`."""
        for _ in range(5):
            execution = self._live.get(workflow_id)
            if execution is not None:
                reply: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                if execution.post(Cancel(principal, reason, reply)):
                    try:
                        await reply
                        return
                    except GoneError:
                        continue
                await execution.done.wait()
                continue
            if await self._cancel_cold(workflow_id, principal, reason):
                return
        raise AccordError(
            ErrorCode.UNAVAILABLE, "the workflow is busy; try again", {"workflow_id": workflow_id}
        )

    async def recover(self, limit: int = 100) -> list[str]:
        """Resume running workflows whose owner died; returns the ids this runtime took."""
        taken: list[str] = []
        while True:
            ids = await self.log.claim_orphans(self.owner, list(self._graphs), limit)
            for workflow_id in ids:
                try:
                    await self._load(workflow_id, leased=True)
                except AccordError as error:
                    logger.warning("workflow %s not recovered: %s", workflow_id, error.code)
            taken.extend(ids)
            if len(ids) < limit:
                return taken

    async def snapshot(self, workflow_id: str) -> WorkflowSnapshot:
        """The workflow's state: from memory if it runs here, else from its log."""
        execution = self._live.get(workflow_id)
        if execution is not None and not execution.closed:
            await execution.durable()
            if not execution.lost:  # running, or just ended after a successful append
                return _snapshot(execution.graph, execution.state)
        events = await self.log.read(workflow_id)
        if not events:
            raise AccordError(ErrorCode.NOT_FOUND, "no such workflow", {"workflow_id": workflow_id})
        graph = self._graph_of(events[0])
        return _snapshot(graph, _replay(workflow_id, graph, events))

    def handle(self, workflow_id: str) -> WorkflowHandle:
        return WorkflowHandle(self, workflow_id, self._live.get(workflow_id))

    def holds(self, workflow_id: str) -> bool:
        """Whether the workflow is in this runtime's memory now (it runs here). A waiting or
        ended workflow is not: its state is in the log only."""
        return workflow_id in self._live

    def subscribe(self, observer: Observer, workflow_id: str | None = None) -> Callable[[], None]:
        """Call ``observer`` with every event appended from now on (by this runtime), in
        order; only those of ``workflow_id`` if given. Returns an unsubscribe function.
        Observers run inline: keep them quick (hand work to a queue if it is slow)."""
        return self._observers.subscribe(observer, workflow_id)

    # -- internals ----------------------------------------------------------------------------
    async def _after_beat(self) -> None:
        """After each heartbeat: timers and orphans other processes may have left in the log
        (the one periodic look; the timer scheduler itself never polls, timers.py)."""
        self._timers.look_again()
        await self._release_unreleased()
        if self._auto_recover:
            await self.recover()

    async def _release_unreleased(self) -> None:
        """Give back the leases failed executions kept: then the workflows are orphans that
        recovery resumes (here, or on another replica), not running forever under a live
        owner that no longer runs them."""
        for workflow_id in list(self._unreleased):
            if workflow_id in self._live:  # loaded again meanwhile: the lease is in use
                self._unreleased.discard(workflow_id)
                continue
            try:
                await self.log.release(workflow_id, self.owner)
            except AccordError:
                return  # still away: the next heartbeat tries again
            self._unreleased.discard(workflow_id)

    async def _notify(self, events: list[LogEvent]) -> None:
        if self._observers:
            await self._observers.notify(events)

    def _forget(self, execution: WorkflowExecution) -> None:
        if self._live.get(execution.workflow_id) is execution:
            del self._live[execution.workflow_id]

    def _graph_of(self, started: LogEvent) -> Graph:
        if started.type is not EventType.WORKFLOW_STARTED:
            raise AccordError(ErrorCode.INTERNAL, "workflow log does not begin with its start")
        return self._graph(str(started.data.get("graph")), str(started.data.get("version")))

    async def _load(self, workflow_id: str, *, leased: bool = False) -> WorkflowExecution:
        """The workflow's execution here: the live one, or one rebuilt from the log."""
        while True:
            live = self._live.get(workflow_id)
            if live is None:
                break
            if not live.closed:
                return live
            await live.done.wait()
        if not leased and not await self.log.acquire(workflow_id, self.owner):
            record = await self.log.record(workflow_id)
            if record is None:
                raise AccordError(
                    ErrorCode.NOT_FOUND, "no such workflow", {"workflow_id": workflow_id}
                )
            if record.closed:
                raise AccordError(
                    ErrorCode.UNSUPPORTED_OPERATION,
                    "the workflow has ended",
                    {"workflow_id": workflow_id},
                )
            raise AccordError(
                ErrorCode.UNAVAILABLE,
                "the workflow runs on another replica",
                {"workflow_id": workflow_id},
            )
        try:
            events = await self.log.read(workflow_id)
            if not events:
                raise AccordError(
                    ErrorCode.NOT_FOUND, "no such workflow", {"workflow_id": workflow_id}
                )
            graph = self._graph_of(events[0])
            state = _replay(workflow_id, graph, events)
            if state.finished is not None:
                raise AccordError(
                    ErrorCode.UNSUPPORTED_OPERATION,
                    "the workflow has ended",
                    {"workflow_id": workflow_id},
                )
        except BaseException:
            await self.log.release(workflow_id, self.owner)
            raise
        live = self._live.get(workflow_id)
        if live is not None and not live.closed:
            return live  # loaded concurrently in this process
        # Nothing runs in memory for it: nodes the log shows as started run again.
        # A retry the log schedules stays scheduled at its logged time (`begin` sets it).
        for act in state.pending.values():
            act.running = False
            act.backoff = act.backoff and act.retry_at is not None
        execution = WorkflowExecution(self._host, graph, state, leased=True)
        self._live[workflow_id] = execution
        execution.begin([], step_first=True)
        return execution

    async def _fire_timer(self, timer: Timer) -> bool:
        try:
            execution = await self._load(timer.workflow_id)
        except AccordError:
            return False
        reply: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if not execution.post(Fire(timer.timer_id, reply)):
            return False
        try:
            return await reply
        except (GoneError, AccordError):
            return False

    async def _cancel_cold(
        self, workflow_id: str, principal: str | None, reason: str | None
    ) -> bool:
        record = await self.log.record(workflow_id)
        if record is None:
            raise AccordError(ErrorCode.NOT_FOUND, "no such workflow", {"workflow_id": workflow_id})
        if record.closed:
            raise AccordError(
                ErrorCode.TASK_NOT_CANCELABLE,
                "the workflow has ended",
                {"workflow_id": workflow_id},
            )
        version = record.version
        graph = self._graphs.get(record.graph_key)
        if graph is not None:
            events = await self.log.read(workflow_id)
            state = _replay(workflow_id, graph, events)
            version = state.version
            for ctx in state.waiting_contexts():
                hook = graph.nodes[ctx.node].on_cancel
                if hook is not None:
                    try:
                        async with self.clock.timeout(self.hook_timeout_s):
                            await hook(ctx)
                    except Exception:
                        logger.exception("workflow %s: cancel hook failed", workflow_id)
        try:
            appended = await self.log.append(
                workflow_id,
                version,
                [NewEvent(EventType.CANCELED, None, {"principal": principal, "reason": reason})],
                status=Status.FAILED,
            )
        except VersionConflictError:
            return False
        await self._notify(appended)
        return True


def _replay(workflow_id: str, graph: Graph, events: list[LogEvent]) -> WorkflowState:
    state = WorkflowState(workflow_id, graph)
    for event in events:
        state.apply(event)
    return state


def _snapshot(graph: Graph, state: WorkflowState) -> WorkflowSnapshot:
    return WorkflowSnapshot(
        workflow_id=state.workflow_id,
        graph=graph.name,
        version=graph.version,
        status=state.status(),
        outputs=dict(state.outputs),
        result=state.sink_outputs(),
        interrupts=list(state.interrupts.values()),
        error=state.error(),
        log_version=state.version,
        spent=dict(state.spent),
    )


def _check_json(value: Any, what: str) -> str:
    try:
        return encode_json(value)
    except (TypeError, ValueError):
        raise AccordError(
            ErrorCode.INVALID_INPUT, f"the workflow {what} must be JSON", {"field": what}
        ) from None


def _same_input(workflow_id: str, existing: Any, given: Any) -> None:
    if json.dumps(existing, sort_keys=True) != json.dumps(given, sort_keys=True):
        raise AccordError(
            ErrorCode.IDEMPOTENCY_CONFLICT,
            "this workflow id was started with a different input",
            {"workflow_id": workflow_id},
        )
