"""The Runner: the refund workflow in this process, as a function call or an event stream.

::

    answer = Runner().run("O-1001 耳机坏了，想退款", user="C-01", session="s-1")

    async with Runner() as runner:                 # the mesh if it runs, else in process
        async for event in runner.run_async("refund O-1001", user="C-01", session="s-1"):
            print(event.author, event.text, event.get_function_calls())
        session = await runner.session_service.get_session(
            app_name="accord", user_id="C-01", session_id="s-1")

One request is one run of the durable refund workflow (the orchestrator's graph and nodes, the
same event log): a session is one conversation, and a workflow waiting for the customer is
continued by the next request in the same session. The user is the principal: the embedding
program says who it is; the text never does. The orchestrator inside is the served one's
assembly (refund/assembly.py); an approver decides a waiting refund with ``approve``. See
docs/runner.md.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from accord.agents.models import build_router
from accord.agents.refund.approvals import approval_input, approval_queue, decide_refund
from accord.agents.refund.assembly import assemble
from accord.agents.refund.config import SERVICE_NAME, TOOLS_FILE, RefundSettings
from accord.agents.refund.conversation import Conversation, Step
from accord.agents.refund.facts import WorkflowInput
from accord.agents.refund.node_deps import Deps
from accord.agents.runner.events import Content, Event, Part, new_id
from accord.agents.runner.history import Session, SessionService
from accord.agents.runner.hub import CURRENT_WORKFLOW, Hub, Sink
from accord.agents.runner.inprocess import SERVICES, InProcessMesh, mesh_answers
from accord.agents.runner.observe import ObservedMetrics, ObservedPeers, tool_call_events
from accord.agents.runner.portal import Portal, at_interpreter_exit
from accord.agents.runner.request import Request, request_of
from accord.agents.runner.sessions import MAX_FIELD, SessionKey, Sessions
from accord.agents.runner.translate import final_event, progress_parts
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import new_traceparent
from accord.protocol.auth import Principal, owner_key
from accord.protocol.auth.names import DEFAULT_APP as DEMO_APP
from accord.protocol.auth.names import ROLE_APPROVER
from accord.protocol.in_process import InProcessServers
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import ServerSpec, ToolsConfig
from accord.protocol.mcp.credentials import ServiceCredential
from accord.protocol.settings import data_dir, service_url
from accord.refund_contracts.domain import is_customer_id
from accord.runtime.models import Metrics, ModelsConfig
from accord.runtime.workflow import Clock, EventType, LogEvent, Runtime, WorkflowSnapshot

# The Runner's app is the tenant app of its sessions and of every tool call it makes: orders and
# money are kept per app (#30), and the demo data is the demo app's.
DEFAULT_APP: Final = DEMO_APP
DEFAULT_UNITS: Final = 100
DEFAULT_DEADLINE_S: Final = 3600.0
USER: Final = "user"
ENDED: Final = (EventType.NODE_OUTPUT, EventType.NODE_FAILED, EventType.INTERRUPTED)

ToolsSource = str | Path | ToolsConfig | Sequence[ServerSpec] | None
log = logging.getLogger(__name__)


class Runner:
    """Runs the refund workflow for an embedding program; see the module docstring.

    ``event_log_url``: ``sqlite:///path`` or ``postgresql://...`` (default: a SQLite file in the
    data directory). ``tools``: a tools config path, a loaded config or server specs (default:
    ``ACCORD_TOOLS_CONFIG`` or the shipped file). ``agents``: URLs of ``policy`` and ``risk``
    (default: ``service_url``). ``in_process``: serve policy-check, risk-check and both tool
    servers inside this process instead (see inprocess.py). Left as None, it is decided at
    open: given ``tools`` or ``agents`` mean the mesh; otherwise the mesh if its four
    services answer ``/healthz`` at their configured URLs (``accord up``), else in process.
    ``in_process_servers``: tool servers this process serves besides (a test's own); the
    in-process services are served there too, and the Runner's tool client is given them.
    """

    def __init__(
        self,
        app_name: str = DEFAULT_APP,
        *,
        event_log_url: str | None = None,
        tools: ToolsSource = None,
        agents: Mapping[str, str] | None = None,
        models: ModelsConfig | None = None,
        in_process: bool | None = None,
        in_process_servers: InProcessServers | None = None,
        units: int = DEFAULT_UNITS,
        deadline_s: float = DEFAULT_DEADLINE_S,
        approval_timeout_s: float | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.app_name = app_name
        self.event_log_url = event_log_url
        self._tools_source = tools
        self._agents = dict(agents or {})
        self._models = models
        self._in_process = in_process
        self._servers = in_process_servers
        self._units = units
        self._deadline_s = deadline_s
        self._approval_timeout_s = approval_timeout_s
        self._clock = clock
        self._hub = Hub()
        self.metrics: Metrics = ObservedMetrics(self._hub)
        self._runtime: Runtime | None = None
        self._conversation: Conversation | None = None
        self._sessions: Sessions | None = None
        self._mesh: InProcessMesh | None = None
        self._deps: Deps | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opening = asyncio.Lock()
        self._portal: Portal | None = None

    # -- lifecycle --------------------------------------------------------------------------
    async def open(self) -> None:
        async with self._opening:
            if self._runtime is not None:
                return
            await self._open()

    async def _open(self) -> None:
        transport = None
        if self._in_process is None:
            self._in_process = await self._choose_in_process()
        if self._in_process:
            self._mesh = InProcessMesh(servers=self._servers)
            await self._mesh.__aenter__()
            transport = self._mesh.transport()
        log_url = self.event_log_url or (
            f"sqlite:///{data_dir() / f'runner-{_file_safe(self.app_name)}-workflows.db'}"
        )
        urls = {
            "policy": self._agents.get("policy") or service_url("policy"),
            "risk": self._agents.get("risk") or service_url("risk"),
        }
        settings = RefundSettings(
            workflow_log_url=log_url,
            policy_url=urls["policy"],
            risk_url=urls["risk"],
            approval_timeout_override_s=self._approval_timeout_s,
        )
        tools = self._tool_client()
        tools.observe(tool_call_events(self._hub))
        # The orchestrator's own assembly (refund/assembly.py): the same graphs, the approval
        # workflow and the attention board included; only the collaborators are the Runner's.
        orchestrator = assemble(
            settings,
            tools=tools,
            peers=ObservedPeers(self._hub, urls, transport=transport),
            router=build_router(self._models, metrics=self.metrics),
            owner=f"runner-{uuid.uuid4().hex}",
            clock=self._clock,
        )
        deps, runtime = orchestrator.deps, orchestrator.runtime
        try:
            await tools.start()
            await runtime.open()
        except BaseException:
            await self._close_parts(deps, None)
            raise
        self._deps, self._runtime = deps, runtime
        self._conversation = Conversation(runtime)
        self._sessions = Sessions(runtime.log)
        self._loop = asyncio.get_running_loop()

    async def _choose_in_process(self) -> bool:
        """Explicit peers mean the mesh; otherwise the mesh only if it is there."""
        if self._tools_source is not None or self._agents:
            return False
        running = await mesh_answers(SERVICES)
        if not running:
            log.info("no mesh answers at the configured URLs: serving it in this process")
        return not running

    @property
    def in_process(self) -> bool | None:
        """Whether the services run inside this process (None until opened, if not given)."""
        return self._in_process

    @property
    def session_service(self) -> SessionService:
        """The sessions of this Runner's log: ``get_session``, ``list_sessions`` (ADK's
        names). Open the Runner first (``async with``)."""
        runtime, sessions = self._runtime, self._sessions
        if runtime is None or sessions is None:
            raise AccordError(ErrorCode.INVALID_INPUT, "open the Runner first (async with)")
        return SessionService(runtime, sessions)

    async def get_session(self, *, user: str, session: str) -> Session | None:
        """A session of this Runner's app, with its events and state (None: none yet)."""
        await self.open()
        return await self.session_service.get_session(
            app_name=self.app_name, user_id=user, session_id=session
        )

    async def list_sessions(self, *, user: str) -> list[Session]:
        """The user's sessions of this Runner's app (state, no events), newest first."""
        await self.open()
        return await self.session_service.list_sessions(app_name=self.app_name, user_id=user)

    def _tool_client(self) -> ToolClient:
        """The orchestrator's tool client: its own service credential, as in `accord serve`;
        it reaches the in-process tool servers because it is given them, none otherwise."""
        source = self._tools_source
        here = self._mesh.servers if self._mesh is not None else self._servers
        if source is None or isinstance(source, str | Path):
            return ToolClient.from_config(
                source, default=TOOLS_FILE, service=SERVICE_NAME, in_process=here
            )
        if isinstance(source, ToolsConfig):
            return ToolClient.from_config(config=source, service=SERVICE_NAME, in_process=here)
        servers = list(source)
        grants = [c.name for s in servers for c in s.contracts]
        return ToolClient.for_servers(
            servers, credential=ServiceCredential(SERVICE_NAME, grants), in_process=here
        )

    async def close(self) -> None:
        runtime, self._runtime = self._runtime, None
        deps, self._deps = self._deps, None
        self._sessions = None
        self._conversation = None
        if deps is not None:
            await self._close_parts(deps, runtime)

    async def _close_parts(self, deps: Deps, runtime: Runtime | None) -> None:
        try:
            if runtime is not None:
                await runtime.close()
        finally:
            await deps.tools.aclose()
            await deps.peers.aclose()
            mesh, self._mesh = self._mesh, None
            if mesh is not None:
                await mesh.__aexit__(None, None, None)

    async def __aenter__(self) -> Runner:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close_at_exit()

    def _close_at_exit(self) -> None:
        """Close on the Runner's own loop, then stop it (a no-op once done). Hooked to the
        interpreter's exit when ``run()`` makes the loop (portal.at_interpreter_exit), so
        that ``Runner().run(...)`` without ``with`` still closes its tool sessions and
        in-process services before the interpreter destroys their tasks."""
        portal, self._portal = self._portal, None
        if portal is not None:
            try:
                portal.call(self.close())
            finally:
                portal.stop()

    # -- the API ----------------------------------------------------------------------------
    def run(
        self,
        text: str = "",
        *,
        user: str | None = None,
        session: str | None = None,
        data: dict[str, Any] | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        new_message: Content | str | None = None,
    ) -> str:
        """The final answer's text (the decision, or the question the workflow asks).
        ``user_id``, ``session_id``, ``new_message``: ADK's names for the same (request.py).

        Synchronous: the Runner keeps its own event loop thread (close it with ``with Runner()
        as runner:``). A failed workflow raises its contract :class:`AccordError`.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise AccordError(
                ErrorCode.INVALID_INPUT, "run() blocks: inside an event loop use run_async()"
            )
        if self._runtime is not None and self._portal is None:
            raise AccordError(
                ErrorCode.INVALID_INPUT, "this Runner was opened in an event loop: use run_async()"
            )
        if self._portal is None:
            self._portal = Portal()
            at_interpreter_exit(self._close_at_exit)
        asked = request_of(
            text,
            user=user,
            session=session,
            data=data,
            user_id=user_id,
            session_id=session_id,
            new_message=new_message,
        )
        return self._portal.call(self._answer(asked))

    async def _answer(self, asked: Request) -> str:
        final: Event | None = None
        async for event in self.run_async(
            asked.text, user=asked.user, session=asked.session, data=asked.data
        ):
            if event.is_final_response():
                final = event
        assert final is not None  # run_async always ends with one
        if final.status is Status.FAILED:
            raise AccordError.from_dict(final.error or {})
        return final.text

    async def run_async(
        self,
        text: str = "",
        *,
        user: str | None = None,
        session: str | None = None,
        data: dict[str, Any] | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        new_message: Content | str | None = None,
    ) -> AsyncIterator[Event]:
        """Events as they happen: the user's message, node progress, tool and agent calls and
        their responses, model usage, and last the final response (``is_final_response()``).
        Read it to the end (or ``aclose()`` it): the session takes one request at a time.
        ``user_id``, ``session_id``, ``new_message``: ADK's names for the same (request.py)."""
        asked = request_of(
            text,
            user=user,
            session=session,
            data=data,
            user_id=user_id,
            session_id=session_id,
            new_message=new_message,
        )
        text, user, session, data = asked.text, asked.user, asked.session, asked.data
        await self.open()
        self._same_loop()
        key = SessionKey(self.app_name, user, session)
        if not is_customer_id(user):
            raise AccordError(
                ErrorCode.PERMISSION_DENIED,
                "refunds are requested by a customer (user C-<digits>)",
                {"field": "user"},
            )
        runtime, sessions = self._runtime, self._sessions
        assert runtime is not None
        assert sessions is not None
        sink = Sink(new_id())
        async with sessions.lock(key):
            yield Event(
                invocation_id=sink.invocation_id,
                author=USER,
                content=Content(role=USER, parts=[Part.text_of(text)] if text else []),
            )
            workflow_id, step = await self._plan(key, text, data)
            if step is None:  # an approval is pending: nothing runs, the same answer again
                snapshot = await runtime.snapshot(workflow_id)
                yield final_event(snapshot, sink.invocation_id, sink.usage)
                return
            detach = self._hub.attach(workflow_id, sink)
            unsubscribe = runtime.subscribe(self._observer(workflow_id, sink), workflow_id)
            # The workflow's node tasks inherit this context: their calls find this sink.
            context = contextvars.copy_context()
            context.run(CURRENT_WORKFLOW.set, workflow_id)
            driver = asyncio.create_task(self._drive(step, sink), context=context)
            try:
                while (event := await sink.queue.get()) is not None:
                    yield event
                snapshot = await driver
            finally:
                unsubscribe()
                detach()
                if not driver.done():
                    driver.cancel()  # the caller stopped listening; the workflow goes on
            yield final_event(snapshot, sink.invocation_id, sink.usage)

    # -- approvals --------------------------------------------------------------------------
    async def approve(
        self, task_id: str, *, approver: str, decision: str, note: str = ""
    ) -> dict[str, Any]:
        """An approver's decision (``approve`` or ``reject``) on a refund of this Runner's app
        that waits for one (``task_id``: its ``workflow_id``): the orchestrator's
        ``refund.approve``, run as its approval workflow with the same rules (approvals.py).
        ``approver`` is the principal, said by the embedding program as ``user`` is. The refund
        goes on at once; the answer is ``{task_id, decision, outcome}``."""
        await self.open()
        self._same_loop()
        conversation = self._conversation
        assert conversation is not None
        approval_id = f"approval-{uuid.uuid4().hex}"
        body = {"task_id": task_id, "decision": decision, "note": note}
        inp = approval_input(self._approver(approver), approval_id, body, None)
        return await decide_refund(conversation, approval_id, inp)

    async def approvals(self, *, approver: str) -> list[dict[str, Any]]:
        """The approver's queue, as ``GET /approvals`` lists it: the refunds of this Runner's
        app waiting for an approver (not their own), then those that need a person."""
        await self.open()
        self._same_loop()
        runtime = self._runtime
        assert runtime is not None
        return await approval_queue(runtime, self._approver(approver))

    def _approver(self, subject: str) -> Principal:
        if not subject or len(subject) > MAX_FIELD or not subject.isprintable():
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                f"approver must be 1 to {MAX_FIELD} printable characters",
                {"field": "approver"},
            )
        return Principal(subject=subject, roles=frozenset({ROLE_APPROVER}), app=self.app_name)

    def _same_loop(self) -> None:
        if self._loop is not asyncio.get_running_loop():
            raise AccordError(
                ErrorCode.INVALID_INPUT, "a Runner serves the event loop it was opened in"
            )

    # -- internals ----------------------------------------------------------------------------
    async def _plan(
        self, key: SessionKey, text: str, data: dict[str, Any] | None
    ) -> tuple[str, Step | None]:
        """Which workflow this request goes to, and what to do with it (the conversation
        decides, as it does for the A2A executor)."""
        conversation, sessions = self._conversation, self._sessions
        assert conversation is not None
        assert sessions is not None
        turn = await sessions.current(key)
        if turn:
            workflow_id = key.workflow_id(turn)
            await self._check_owner(workflow_id, key)
            snapshot = await conversation.runtime.snapshot(workflow_id)
            if snapshot.status not in (Status.COMPLETED, Status.FAILED):
                step = await conversation.next_step(
                    workflow_id, text=text, data=data, principal=key.user
                )
                return workflow_id, step
        turn += 1
        workflow_id = key.workflow_id(turn)
        sessions.advance(key, turn)
        deadline = datetime.now(UTC) + timedelta(seconds=self._deadline_s)
        start = WorkflowInput(
            text=text or str((data or {}).get("text") or ""),
            order_id=(data or {}).get("order_id"),
            customer_id=key.user,
            owner=owner_key(key.app, key.user),
            app=key.app,
            session=key.session,
            units=self._units,
            deadline=deadline.isoformat(),
            traceparent=new_traceparent(),
            data=data,
        )
        return workflow_id, conversation.start(workflow_id, start)

    async def _check_owner(self, workflow_id: str, key: SessionKey) -> None:
        """Defence in depth: the ids already separate sessions; the log must agree."""
        runtime = self._runtime
        assert runtime is not None
        events = await runtime.log.read(workflow_id)
        given = WorkflowInput.model_validate(events[0].data.get("input"))
        if (given.app, given.customer_id, given.session) != (key.app, key.user, key.session):
            raise AccordError(ErrorCode.PERMISSION_DENIED, "that session belongs to someone else")

    def _observer(self, workflow_id: str, sink: Sink) -> Any:
        hub = self._hub

        async def observe(event: LogEvent) -> None:
            node = event.node
            if node is not None:
                if event.type is EventType.NODE_STARTED:
                    hub.started(workflow_id, node)
                elif event.type in ENDED:
                    hub.ended(workflow_id, node)
            parts = progress_parts(event)
            if parts is not None:
                sink.put(
                    Event(
                        invocation_id=sink.invocation_id,
                        author=node or "orchestrator",
                        content=Content(parts=parts),
                        workflow_id=workflow_id,
                    )
                )

        return observe

    async def _drive(self, step: Step, sink: Sink) -> WorkflowSnapshot:
        conversation = self._conversation
        assert conversation is not None
        try:
            return await conversation.drive(step)
        finally:
            sink.queue.put_nowait(None)


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:64] or "app"
