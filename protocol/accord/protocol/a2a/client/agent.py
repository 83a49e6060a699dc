"""An A2A 1.0 client that speaks the Accord contract, and still talks to any A2A agent.

    async with await A2AClient.connect("http://127.0.0.1:8701", token=token) as agent:
        view = await agent.send(data={"order": {...}, "reason": "damaged"}, envelope=envelope)
        if view.status is Status.WAITING:              # waiting(input): answer in the same task
            view = await agent.send(text="the handle is broken, photo IMG-2291", task=view)
        view.data, view.error                          # the answer, or the contract error

What it does for the caller:

- resolves the Agent Card and picks JSON-RPC or HTTP+JSON (the agent's order, or ``transport``);
- authenticates with a bearer token or an API key (header from the card's apiKey scheme),
  sent only to the origin of the URL it was given: a card whose interface points elsewhere is
  refused (:mod:`accord.protocol.a2a.origins`, ``ACCORD_TRUSTED_ORIGINS`` to opt in);
- puts the delegation envelope and a W3C ``traceparent`` in message metadata (the traceparent
  also as an HTTP header), and sends ``A2A-Version: 1.0``; each send is an
  ``invoke_agent {agent}`` CLIENT span, and the traceparent sent is that span's (see
  accord.protocol.telemetry);
- reads every answer as a :class:`TaskView` (contract state, data, question, error, node);
  a failed TASK is a view with ``error`` set, a failed CALL raises :class:`AccordError`;
- retries a call by its error's retry class (:func:`accord.contracts.retry.decide`) only when
  re-sending is known to be safe: the agent was unreachable, or answered with an error. A send
  whose fate is unknown (a timeout or a dropped connection before any answer, a stream broken
  before its first event) is sent again, with the same messageId, to an agent whose card
  declares idempotent send (the copy is answered with the task the first one made, which the
  client then follows), and never to one that does not (it would make a second task). A stream
  that broke after its first event is never re-sent: the client follows that task instead
  (:meth:`A2AClient._follow`: it reads the task again, through an agent restart, until it stops
  for the caller), so a caller rides out a restart of the agent it talks to;
- keeps retrying a retry-safe failure (the agent unreachable: it is restarting) with backoff
  until the call's deadline (the envelope's, or ``CLIENT_RETRY``'s 60 s), not for a count;
- ``deadline_s`` bounds a whole send: when it passes the caller gets RETRYABLE_TIMEOUT and the
  remote task is left as it is (cancel it if you no longer want it).
"""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing, contextmanager
from types import TracebackType
from typing import Any, Final, TypeVar

import httpx
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.types.a2a_pb2 import (
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, VERSION_HEADER
from opentelemetry.trace import Span, SpanKind

from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode, RetryClass
from accord.contracts.keys import (
    CONTRACT_VERSION_META_KEY,
    DELEGATION_EXTENSION_URI,
    SKILL_META_KEY,
    TRACEPARENT_KEY,
)
from accord.contracts.retry import Action, RetryPolicy, decide
from accord.contracts.versions import require_served
from accord.protocol import telemetry
from accord.protocol.a2a.client.card import ResolvedCard, resolve_card
from accord.protocol.a2a.client.view import TaskTracker, TaskView, view_of_task
from accord.protocol.a2a.client.wire import Wire, WireError, make_wire
from accord.protocol.a2a.origins import check_origin
from accord.protocol.a2a.wire import data_part
from accord.protocol.breaker import Breaker, breaker
from accord.protocol.sent import as_last_of, never_sent
from accord.protocol.telemetry import instruments, spans

__all__ = ["A2AClient", "ResolvedCard", "TaskView", "new_traceparent"]

DEFAULT_TIMEOUT: Final = httpx.Timeout(10.0, read=120.0)
_POLL_S: Final = (0.05, 1.0)
# Resuming a stream (docs/replicas.md "Resuming a stream"): the id of the last status message
# the client saw, as Server-Sent Events name it; NO_EVENT when it saw none (every event again).
LAST_EVENT_ID: Final = "Last-Event-ID"
NO_EVENT: Final = "0"  # first and longest pause while polling a non-streaming agent
# Retry-safe failures (the agent unreachable, an error answer) are retried until 60 s have
# passed, or the envelope's deadline if sooner: an agent restart takes a few seconds, and a
# fixed count of four gave up after under a second.
CLIENT_RETRY: Final = RetryPolicy(
    max_attempts=None, base_delay_ms=100, max_delay_ms=2_000, deadline_ms=60_000
)

T = TypeVar("T")


def new_traceparent() -> str:
    """A fresh W3C traceparent (a new trace, sampled)."""
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


class A2AClient:
    """One agent, one binding. Create with :meth:`connect`; close with ``async with``."""

    def __init__(
        self,
        card: ResolvedCard,
        http: httpx.AsyncClient,
        *,
        transport: str | None = None,
        token: str | None = None,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        owns_http: bool = False,
        expects: str | None = None,
    ) -> None:
        """``expects``: the version of the agent's contract this caller is built against. The
        card must serve one of its major (else VERSION_UNSUPPORTED naming both, before anything
        is sent), and every new task names the served version it speaks."""
        self.card = card
        self.contract_version = (
            require_served(card.name, expects, card.contract_versions) if expects else None
        )
        self.interface = card.pick(transport)
        # Before any credential is attached: the interface must be at the card's own origin.
        check_origin(card.url, self.interface.url, agent=card.name)
        self._wire: Wire = make_wire(http, self.interface.protocol_binding, self.interface.url)
        self._http = http
        self._owns_http = owns_http
        self._retry = retry or CLIENT_RETRY
        self._auth: dict[str, str] = {}
        if token:
            self._auth["Authorization"] = f"Bearer {token}"
        elif api_key:
            self._auth[card.api_key_header()] = api_key

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        api_key: str | None = None,
        transport: str | None = None,
        retry: RetryPolicy | None = None,
        http: httpx.AsyncClient | None = None,
        expects: str | None = None,
    ) -> A2AClient:
        """Resolve ``url``'s card and build a client for it (``transport``: jsonrpc | rest).

        With ``retry`` given, reading the card is retried as every call of the client is
        (a retryable failure: the agent restarting, a load balancer between two processes);
        without, a card that cannot be read is the caller's error at once (a command run
        against a mesh that is not up fails fast)."""
        own = http is None
        client = http or httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
        try:
            card = await _resolve_patiently(client, url, retry)
            return cls(
                card,
                client,
                transport=transport,
                token=token,
                api_key=api_key,
                retry=retry,
                owns_http=own,
                expects=expects,
            )
        except BaseException:
            if own:
                await client.aclose()
            raise

    @property
    def binding(self) -> str:
        return str(self.interface.protocol_binding)

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> A2AClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- sending -----------------------------------------------------------------------------

    async def stream(
        self,
        *,
        text: str | None = None,
        data: Mapping[str, Any] | None = None,
        task: TaskView | str | None = None,
        context_id: str | None = None,
        envelope: DelegationEnvelope | None = None,
        traceparent: str | None = None,
        skill: str | None = None,
    ) -> AsyncGenerator[TaskView, None]:
        """Send a message and yield the task's view after every event, until it stops for the
        caller (terminal or waiting). ``task`` continues an existing task.

        The ``invoke_agent`` span is current while the generator runs: iterate it to the end
        (or close it) in the task that started it, as ``async with aclosing(...)`` does."""
        with self._invoke_span(task, envelope, traceparent, skill) as invocation:
            async with aclosing(
                self._stream(text, data, task, context_id, envelope, traceparent, skill)
            ) as views:
                async for view in views:
                    invocation.saw(view)
                    yield view

    async def _stream(
        self,
        text: str | None,
        data: Mapping[str, Any] | None,
        task: TaskView | str | None,
        context_id: str | None,
        envelope: DelegationEnvelope | None,
        traceparent: str | None,
        skill: str | None,
    ) -> AsyncGenerator[TaskView, None]:
        request, headers = await self._prepare(
            text, data, task, context_id, envelope, traceparent, skill
        )
        started = time.monotonic()
        attempt = 0
        shared = self._breaker()
        sent = False  # may an earlier attempt have reached the agent?
        while True:
            attempt += 1
            tracker = TaskTracker()
            received = False
            seen: list[str] = []  # the status messages' ids, in order: where a resume starts
            try:
                refused = shared.refuse()  # the agent is known down: do not call it
                if refused is not None:
                    raise WireError(refused, retry_safe=True, local=True)
                async with aclosing(
                    self._mark(shared, self._wire.stream(request, headers))
                ) as events:
                    async for event in events:
                        received = True
                        _note_event_id(event, seen)
                        view = tracker.apply(event)
                        yield view
                        if view.is_interrupted:
                            return
                if tracker.view is None:
                    raise AccordError(
                        ErrorCode.CONTRACT_VIOLATION, "the agent closed the stream without an event"
                    )
                if tracker.view.task_id:
                    # Ended cleanly before the task stopped for the caller: an agent shutting
                    # down gracefully ends its open streams so. The task goes on (or is resumed
                    # after the restart): follow it, as after a broken stream.
                    ended = AccordError(
                        ErrorCode.UNAVAILABLE, "the agent ended the stream before the task stopped"
                    )
                    async for view in self._follow(tracker.view, ended, envelope):
                        yield view
                return
            except WireError as exc:
                followed = tracker.view
                if received and followed is not None and followed.task_id:
                    # The task exists: never send again (a second task); resume its events
                    # (through a load balancer: on another replica), else read it.
                    async for view in self._resume(tracker, seen, exc.error, envelope):
                        yield view
                    return
                if received or not self._resendable(exc):
                    raise exc.error from None
                error, sent = as_last_of(exc.error, sent), sent or not never_sent(exc.error)
                await self._pause_or_raise(error, attempt, started, envelope)

    async def send(
        self,
        *,
        text: str | None = None,
        data: Mapping[str, Any] | None = None,
        task: TaskView | str | None = None,
        context_id: str | None = None,
        envelope: DelegationEnvelope | None = None,
        traceparent: str | None = None,
        skill: str | None = None,
        streaming: bool | None = None,
        deadline_s: float | None = None,
        on_update: Callable[[TaskView], Awaitable[None] | None] | None = None,
    ) -> TaskView:
        """Send a message and return the task once it stops for the caller.

        Streams when the agent can (``streaming`` overrides), calling ``on_update`` with every
        intermediate view. ``deadline_s`` bounds the whole call (RETRYABLE_TIMEOUT).
        """
        use_stream = self.card.streaming if streaming is None else streaming

        async def run() -> TaskView:
            if use_stream:
                last: TaskView | None = None
                updates = self._stream(text, data, task, context_id, envelope, traceparent, skill)
                async with aclosing(updates) as views:
                    async for view in views:
                        last = view
                        await _notify(on_update, view)
                assert last is not None  # stream() raises when no event came
                return last
            request, headers = await self._prepare(
                text, data, task, context_id, envelope, traceparent, skill
            )
            answer = await self._call(lambda: self._wire.send(request, headers), sending=True)
            tracker = TaskTracker()
            kind = answer.WhichOneof("payload")
            if kind is None:
                raise AccordError(
                    ErrorCode.CONTRACT_VIOLATION,
                    "the agent answered with neither a task nor a message",
                )
            view = tracker.apply(_as_stream(answer))
            await _notify(on_update, view)
            return await self._until_interrupted(view, on_update)

        with self._invoke_span(task, envelope, traceparent, skill) as invocation:
            view = await _within(deadline_s, run())
            invocation.saw(view)
            return view

    async def subscribe(
        self, task: TaskView | str, *, after: str | None = None
    ) -> AsyncGenerator[TaskView, None]:
        """Follow a task (``SubscribeToTask``) until it stops for the caller, yielding its view
        after every event. ``after``: the ``event_id`` of the last view the caller saw (of a
        stream that broke): an agent that resumes (docs/replicas.md "Resuming a stream") gives
        every event after it first, in order; without it, the task as it is now comes first.
        A subscription that breaks is resumed the same way, until the deadline of the
        client's retry policy."""
        task_id = task.task_id if isinstance(task, TaskView) else task
        tracker = TaskTracker()
        snapshot: StreamResponse | None = None
        seen = [after] if after else []
        known = set(seen)
        started, failures = time.monotonic(), 0
        while True:
            headers = self._headers(None)
            if after:
                headers = {**headers, LAST_EVENT_ID: after}
            try:
                async with aclosing(self._wire.subscribe(task_id, headers)) as events:
                    first = True
                    async for event in events:
                        if first:  # the snapshot: "now", unless resuming (the events follow)
                            first = False
                            if after:
                                snapshot = event
                                continue
                            view = tracker.apply(event)
                            yield view
                            if view.is_interrupted:
                                return
                            continue
                        event_id = _event_id(event)
                        if event_id is not None and event_id in known:
                            continue
                        if event_id is not None:
                            known.add(event_id)
                            seen.append(event_id)
                        view = tracker.apply(event)
                        yield view
                        if view.is_interrupted:
                            return
                break  # ended before the task stopped for the caller
            except WireError as exc:
                if exc.error.retry_class is not RetryClass.RETRY:
                    raise exc.error from None
                if tracker.view is not None:
                    break  # broken after the snapshot: resumed below, from the last event
                failures += 1
                await self._pause_or_raise(exc.error, failures, started)
        if tracker.view is None and snapshot is not None:
            view = tracker.apply(snapshot)  # resumed, and nothing came after the last event
            if view.is_interrupted:
                yield view
                return
        if tracker.view is None:
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION, "the agent closed the stream without an event"
            )
        # Broken (or ended before the task stopped): resume from the last event seen.
        async for view in self._resume(
            tracker, seen, AccordError(ErrorCode.UNAVAILABLE, "the subscription ended"), None
        ):
            yield view

    async def get(self, task_id: str) -> TaskView:
        """The task as the agent has it now (NOT_FOUND for another caller's or unknown task)."""
        headers = self._headers(None)
        return view_of_task(await self._call(lambda: self._wire.get(task_id, headers)))

    async def cancel(self, task_id: str) -> TaskView:
        """Ask the agent to cancel; a canceled task reads as failed/CANCELED."""
        headers = self._headers(None)
        return view_of_task(await self._call(lambda: self._wire.cancel(task_id, headers)))

    async def list_tasks(
        self,
        *,
        context_id: str | None = None,
        page_size: int = 50,
        page_token: str = "",
    ) -> tuple[list[TaskView], str]:
        """One page of the caller's tasks, newest first, and the next page's token ("" at
        the end). Only the caller's own tasks exist for it (tenancy)."""
        request = ListTasksRequest(
            page_size=page_size, page_token=page_token, include_artifacts=True
        )
        if context_id:
            request.context_id = context_id
        headers = self._headers(None)
        page = await self._call(lambda: self._wire.list(request, headers))
        return [view_of_task(t) for t in page.tasks], page.next_page_token

    # -- internals ---------------------------------------------------------------------------

    @contextmanager
    def _invoke_span(
        self,
        task: TaskView | str | None,
        envelope: DelegationEnvelope | None,
        traceparent: str | None,
        skill: str | None,
    ) -> Iterator[_Invocation]:
        """The CLIENT span of one send, under the active span or the caller's traceparent."""
        agent = self.card.name
        task_id = task.task_id if isinstance(task, TaskView) else task
        attributes = spans.agent_attributes(
            agent,
            {spans.SKILL: skill, spans.TASK_ID: task_id or None, "url.full": self.interface.url},
        )
        explicit = traceparent or (envelope.traceparent if envelope else None)
        measured = {spans.GEN_AI_OPERATION: spans.INVOKE_AGENT, spans.GEN_AI_AGENT_NAME: agent}
        started = time.monotonic()
        with telemetry.span(
            f"{spans.INVOKE_AGENT} {agent}",
            kind=SpanKind.CLIENT,
            context=spans.parent_context(explicit),
            attributes=attributes,
        ) as span:
            invocation = _Invocation(span)
            try:
                yield invocation
            except BaseException as exc:
                measured[spans.ERROR_TYPE] = spans.error_type(exc)
                raise
            finally:
                if invocation.error is not None and spans.ERROR_TYPE not in measured:
                    measured[spans.ERROR_TYPE] = invocation.error
                instruments.client_duration.record(time.monotonic() - started, measured)

    async def _until_interrupted(
        self, view: TaskView, on_update: Callable[[TaskView], Awaitable[None] | None] | None
    ) -> TaskView:
        # A non-streaming agent may answer before the task stops (or ignore blocking):
        # poll it with a growing pause; the caller's deadline bounds the loop.
        pause = _POLL_S[0]
        while not view.is_interrupted and view.task_id:
            await asyncio.sleep(pause)
            pause = min(pause * 2, _POLL_S[1])
            latest = await self.get(view.task_id)
            if latest.state != view.state or latest.status_text != view.status_text:
                await _notify(on_update, latest)
            view = latest
        return view

    async def _prepare(
        self,
        text: str | None,
        data: Mapping[str, Any] | None,
        task: TaskView | str | None,
        context_id: str | None,
        envelope: DelegationEnvelope | None,
        traceparent: str | None,
        skill: str | None,
    ) -> tuple[SendMessageRequest, dict[str, str]]:
        if text is None and data is None:
            raise AccordError(ErrorCode.INVALID_INPUT, "a message needs text or data")
        task_id = task.task_id if isinstance(task, TaskView) else task
        if isinstance(task, TaskView):
            context_id = context_id or task.context_id
        if task_id and not context_id:
            # The agent keeps a continuation in the task's own context; ask it which one.
            context_id = (await self.get(task_id)).context_id
        # The active span (our invoke_agent span when tracing is on) is the parent to send; an
        # explicit or envelope traceparent when nothing is active; a new trace at the root.
        trace = (
            spans.current_traceparent()
            or traceparent
            or (envelope.traceparent if envelope else None)
            or new_traceparent()
        )
        parts: list[Part] = []
        if text:
            parts.append(Part(text=text))
        if data is not None:
            parts.append(data_part(data))
        message = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            parts=parts,
            task_id=task_id or "",
            context_id=context_id or "",
        )
        metadata: dict[str, Any] = {TRACEPARENT_KEY: trace}
        if envelope is not None:
            metadata.update(envelope.to_metadata())
            message.extensions.append(DELEGATION_EXTENSION_URI)
        if skill:
            metadata[SKILL_META_KEY] = skill
        if self.contract_version and not task_id:
            # A new task: the agent reads and answers it in this version (a continuation
            # keeps the version its task started with).
            metadata[CONTRACT_VERSION_META_KEY] = self.contract_version
        message.metadata.update(metadata)
        # No history in the answer: a view reads the status and artifacts only, and the history
        # is at least the message just sent (a check's order facts), which the agent would
        # write out in its first event and this client parse back, per call.
        request = SendMessageRequest(
            message=message,
            configuration=SendMessageConfiguration(history_length=0),
            tenant=self.interface.tenant,
        )
        headers = self._headers(trace)
        if envelope is not None and self.card.accord_delegation:
            headers[HTTP_EXTENSION_HEADER] = DELEGATION_EXTENSION_URI
        return request, headers

    def _headers(self, traceparent: str | None) -> dict[str, str]:
        headers = {VERSION_HEADER: PROTOCOL_VERSION_CURRENT, **self._auth}
        if traceparent:
            headers[TRACEPARENT_KEY] = traceparent
        return headers

    async def _call(
        self,
        op: Callable[[], Awaitable[T]],
        envelope: DelegationEnvelope | None = None,
        *,
        sending: bool = False,
    ) -> T:
        """``op`` with retries; ``sending``: it sends a message (same messageId each time)."""
        started = time.monotonic()
        attempt = 0
        shared = self._breaker()
        sent = False  # may an earlier attempt have reached the agent?
        while True:
            attempt += 1
            try:
                refused = shared.refuse()  # the agent is known down: do not call it
                if refused is not None:
                    raise WireError(refused, retry_safe=True, local=True)
                try:
                    answer = await op()
                except WireError as failed:
                    shared.record(failed.error)
                    raise
                shared.record(None)
                return answer
            except WireError as exc:
                if not (exc.retry_safe or (sending and self._resendable(exc))):
                    raise exc.error from None
                error, sent = as_last_of(exc.error, sent), sent or not never_sent(exc.error)
                await self._pause_or_raise(error, attempt, started, envelope)

    def _resendable(self, exc: WireError) -> bool:
        """May a send that failed this way go again? When it surely did not arrive, or when
        its fate is unknown here (no answer came: a timeout, a dropped connection) and the
        agent keys sends by messageId, so a copy is answered with what the first one made."""
        return exc.retry_safe or (exc.local and self.card.idempotent_send)

    def _breaker(self) -> Breaker:
        return breaker(f"a2a:{self.card.name}", self.interface.url)

    @staticmethod
    async def _mark(
        shared: Breaker, events: AsyncGenerator[StreamResponse, None]
    ) -> AsyncGenerator[StreamResponse, None]:
        """The stream's events; its outcome recorded on the agent's breaker."""
        async with aclosing(events):
            try:
                async for event in events:
                    shared.record(None)
                    yield event
            except WireError as failed:
                shared.record(failed.error)
                raise

    async def _resume(
        self,
        tracker: TaskTracker,
        seen: list[str],
        broke: AccordError,
        envelope: DelegationEnvelope | None,
    ) -> AsyncGenerator[TaskView, None]:
        """Resume a broken stream: ``SubscribeToTask`` with ``Last-Event-ID`` (the last status
        message seen), retried until the deadline while the agent cannot be reached. An Accord
        agent whose tasks are derived from a shared log answers it on any replica with the
        snapshot, then every event after that one, in order (docs/replicas.md "Resuming a
        stream"); events already seen are skipped by id. An agent that cannot resume (it
        refuses, or its subscription ends before the task stops) is read instead
        (``_follow``)."""
        assert tracker.view is not None
        task_id = tracker.view.task_id
        started, failures = time.monotonic(), 0
        known = set(seen)
        while True:
            headers = {**self._headers(None), LAST_EVENT_ID: seen[-1] if seen else NO_EVENT}
            try:
                async with aclosing(self._wire.subscribe(task_id, headers)) as events:
                    snapshot: StreamResponse | None = None
                    async for event in events:
                        if snapshot is None:
                            # The task now: the events after the last one seen follow, and
                            # apply to what the client saw (not to the snapshot's later state).
                            snapshot = event
                            continue
                        event_id = _event_id(event)
                        if event_id is not None and event_id in known:
                            continue  # seen before the stream broke
                        if event_id is not None:
                            known.add(event_id)
                            seen.append(event_id)
                        view = tracker.apply(event)
                        yield view
                        if view.is_interrupted:
                            return
            except WireError as exc:
                if exc.error.retry_class is not RetryClass.RETRY:
                    break  # refused (an agent that cannot resume): read the task instead
                failures += 1
                await self._pause_or_raise(exc.error, failures, started, envelope)
                continue
            if snapshot is not None and tracker.apply(snapshot).is_interrupted:
                assert tracker.view is not None
                yield tracker.view  # it had stopped, with no event the client missed
                return
            break  # ended before the task stopped: this agent does not resume; read it
        async for view in self._follow(tracker.view, broke, envelope):
            yield view

    async def _follow(
        self, last: TaskView, broke: AccordError, envelope: DelegationEnvelope | None
    ) -> AsyncGenerator[TaskView, None]:
        """Follow a task whose stream broke until it stops for the caller.

        The agent may be restarting: reading the task is safe to repeat, so every failure to
        reach it is retried (``_call``); a read that finds the task still working waits with a
        growing pause. The task is the agent's truth: a durable agent finishes it after its
        restart, a non-durable one fails it, and either way the caller learns which."""
        headers = self._headers(None)
        pause = _POLL_S[0]
        view = last
        started, failures = time.monotonic(), 0
        while not view.is_interrupted:
            try:
                latest = view_of_task(await self._wire.get(view.task_id, headers))
            except WireError as exc:
                if exc.error.code is ErrorCode.NOT_FOUND:  # gone with a store that was not durable
                    raise broke from None
                # A read is always safe to repeat, whatever broke it: only its code decides.
                failures += 1
                await self._pause_or_raise(exc.error, failures, started, envelope)
                continue
            started, failures = time.monotonic(), 0
            if latest.state != view.state or latest.status_text != view.status_text:
                yield latest
            view = latest
            if not view.is_interrupted:
                await asyncio.sleep(pause)
                pause = min(pause * 2, _POLL_S[1])

    async def _pause_or_raise(
        self,
        error: AccordError,
        attempt: int,
        started: float,
        envelope: DelegationEnvelope | None = None,
    ) -> None:
        elapsed_ms = int((time.monotonic() - started) * 1000)
        remaining_ms = None
        if envelope is not None:
            left = envelope.budget.deadline.timestamp() - time.time()
            remaining_ms = max(0, int(left * 1000))
        decision = decide(error.code, attempt, elapsed_ms, self._retry, remaining_ms=remaining_ms)
        if decision.action is not Action.RETRY:
            raise error
        await asyncio.sleep(decision.delay_ms / 1000)


async def _resolve_patiently(
    http: httpx.AsyncClient, url: str, retry: RetryPolicy | None
) -> ResolvedCard:
    """The card, read again after a retryable failure while ``retry`` allows (once: None)."""
    started, attempt = time.monotonic(), 0
    while True:
        attempt += 1
        try:
            return await resolve_card(http, url)
        except AccordError as error:
            if retry is None:
                raise
            elapsed_ms = int((time.monotonic() - started) * 1000)
            decision = decide(error.code, attempt, elapsed_ms, retry)
            if decision.action is not Action.RETRY:
                raise
            await asyncio.sleep(decision.delay_ms / 1000)


class _Invocation:
    """Writes what became of the remote task onto the invoke_agent span."""

    def __init__(self, span: Span) -> None:
        self.span = span
        self.error: str | None = None

    def saw(self, view: TaskView) -> None:
        if view.task_id:
            self.span.set_attribute(spans.TASK_ID, view.task_id)
        if view.context_id:
            self.span.set_attribute(spans.GEN_AI_CONVERSATION_ID, view.context_id)
        self.span.set_attribute(spans.STATUS, view.status.value)
        if view.error is not None:
            self.error = view.error.code.value
            telemetry.mark_error(self.span, view.error.code)


def _as_stream(answer: SendMessageResponse) -> StreamResponse:
    out = StreamResponse()
    if answer.HasField("task"):
        out.task.CopyFrom(answer.task)
    else:
        out.message.CopyFrom(answer.message)
    return out


async def _notify(
    callback: Callable[[TaskView], Awaitable[None] | None] | None, view: TaskView
) -> None:
    if callback is None:
        return
    result = callback(view)
    if result is not None:
        await result


async def _within(deadline_s: float | None, work: Awaitable[TaskView]) -> TaskView:
    if deadline_s is None:
        return await work
    try:
        async with asyncio.timeout(deadline_s):
            return await work
    except TimeoutError:
        raise AccordError(
            ErrorCode.RETRYABLE_TIMEOUT,
            f"no answer within the caller's deadline of {deadline_s:g} s",
            {"deadline_s": deadline_s},
        ) from None


def _event_id(event: StreamResponse) -> str | None:
    """A status update's id: its message's (an agent that can resume gives it again)."""
    if event.WhichOneof("payload") == "status_update":
        message_id = event.status_update.status.message.message_id
        return message_id or None
    return None


def _note_event_id(event: StreamResponse, seen: list[str]) -> None:
    event_id = _event_id(event)
    if event_id is not None:
        seen.append(event_id)
