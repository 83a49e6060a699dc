"""IdempotentRequestHandler: a2a-sdk's request handler, with send keyed by the request.

The gate has claimed the message's key (:mod:`accord.protocol.a2a.server.send_claim`). Here:

* the claim is this request's (it inserted the key, or took over one nobody works on): the
  message runs under the task id the key assigned; once its first answer is out the key is
  settled (with the Message, when the agent answered with one); a message that made nothing
  (the SDK refused it) forgets its key, so a resend runs it afresh;
* the key was there: the copy is answered with what the first one made, in its current state,
  over the same binding and mode: the Message reply, or the task (blocking: once it stops for
  the caller, as a first send would answer; streaming: its snapshot, then each change until
  it stops). While the first copy is still being taken in by a live process the copy waits for
  its task; if that process is gone before the task existed, the copy takes the key over and
  runs the message itself, so a recorded key never points at work nobody will do. A task that
  exists is its store's to finish (the task store's recovery, the workflow runtime's leases).

Both bindings (JSON-RPC and HTTP+JSON) reach the same two methods, so both behave alike.

A task that stopped to wait is dropped from the SDK's memory soon after its request is done
(``IDLE_RELEASE_S``, app.py). A second request on the same task that looked it up a moment
before the drop finds it finished and the SDK refuses it ("already completed") although the
store has it waiting: such a request is run once more (it had not started: the SDK refuses it
before taking the message in), and the SDK picks the task up from the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final, cast

from a2a.server.cluster.task_store import StoredTask
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.request_handler import validate
from a2a.types import Message, SendMessageRequest, SubscribeToTaskRequest, Task, TaskState
from a2a.utils.errors import UnsupportedOperationError
from a2a.utils.task import apply_history_length

from accord.protocol.a2a.server.contract_errors import typed_errors
from accord.protocol.a2a.server.derived_store import DerivedTaskStore
from accord.protocol.a2a.server.resume import subscribe_from_store
from accord.protocol.a2a.server.send_claim import SEND_STATE_KEY, SendClaim

logger = logging.getLogger(__name__)

FOLLOW_PAUSE_S: Final = (0.05, 1.0)  # first and longest pause reading a task that changes
STOPPED: Final = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)


RELEASED_WORDS: Final = "is already completed."  # ActiveTask refusing an instance that ended
TERMINAL: Final = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)


def claim_of(context: ServerCallContext) -> SendClaim | None:
    claim = context.state.get(SEND_STATE_KEY)
    return claim if isinstance(claim, SendClaim) else None


@typed_errors  # a store's UNAVAILABLE reaches the client as UNAVAILABLE, not INTERNAL
class IdempotentRequestHandler(DefaultRequestHandler):
    """See the module docstring."""

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        claim = claim_of(context)
        if claim is None:
            return await self._send_once_more_if_released(params, context)
        claim.handled = True
        answer = await self._copy_of(claim, context)
        if isinstance(answer, Message):
            return answer
        if isinstance(answer, Task):
            if not params.configuration.return_immediately:  # blocking: once it stops
                answer = await self._stopped(answer, context)
            return apply_history_length(answer, params.configuration)
        try:
            result = await self._send_once_more_if_released(params, context)
        except Exception:
            await self._failed(claim, context)
            raise
        await self._settle(claim, result)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        claim = claim_of(context)
        if claim is None:
            async for event in self._stream_once_more_if_released(params, context):
                yield event
            return
        claim.handled = True
        answer = await self._copy_of(claim, context)
        if isinstance(answer, Message):
            yield answer
            return
        if isinstance(answer, Task):
            async for task in self._follow(answer, context):
                yield apply_history_length(task, params.configuration)
            return
        settled = False
        try:
            async for event in self._stream_once_more_if_released(params, context):
                if not settled:
                    settled = True
                    await self._settle(claim, event)
                yield event
        except Exception:
            if not settled:
                await self._failed(claim, context)
            raise

    @validate(
        lambda self: self._agent_card.capabilities.streaming,
        "Streaming is not supported by the agent",
    )
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        """A task derived from a shared log is followed in the store, on any replica, from
        the client's ``Last-Event-ID`` (accord.protocol.a2a.server.resume); any other task as
        a2a-sdk serves it, from this process's live queue (once more when the SDK had just
        dropped it from memory: see the module docstring)."""
        if isinstance(self.task_store, DerivedTaskStore):
            async for event in subscribe_from_store(params.id, context, self._task):
                yield event
            return
        sent = False
        try:
            async for event in super().on_subscribe_to_task(params, context):
                sent = True
                yield event
        except UnsupportedOperationError as error:
            if sent or not await self._released(params.id, error, context):
                raise
            async for event in super().on_subscribe_to_task(params, context):
                yield event

    # -- internals --------------------------------------------------------------------------
    async def _released(
        self, task_id: str, error: UnsupportedOperationError, context: ServerCallContext
    ) -> bool:
        """Whether the SDK refused a request on ``task_id`` only because it dropped the task
        from memory meanwhile: its refusal of a task it finished (a2a-sdk 1.3.0's words, which
        no other refusal uses) while the store has it, not ended (see the module docstring)."""
        if not task_id or RELEASED_WORDS not in str(error.message):
            return False
        task = await self._task(task_id, context)
        return task is not None and task.status.state not in TERMINAL

    async def _send_once_more_if_released(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        try:
            return cast(Message | Task, await super().on_message_send(params, context))
        except UnsupportedOperationError as error:
            if not await self._released(params.message.task_id, error, context):
                raise
        return cast(Message | Task, await super().on_message_send(params, context))

    async def _stream_once_more_if_released(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncIterator[Event]:
        sent = False
        try:
            async for event in super().on_message_send_stream(params, context):
                sent = True
                yield event
        except UnsupportedOperationError as error:
            if sent or not await self._released(params.message.task_id, error, context):
                raise
            async for event in super().on_message_send_stream(params, context):
                yield event

    async def _copy_of(self, claim: SendClaim, context: ServerCallContext) -> Task | Message | None:
        """What the first copy of the message made, once it exists; None when this request
        holds the key and runs the message."""
        keys, owner, key = claim.keys, claim.owner, claim.key
        if claim.new:
            return None
        record = claim.record
        pause = FOLLOW_PAUSE_S[0]
        while True:
            if record.reply is not None:
                reply: Message = Message.FromString(record.reply)
                return reply
            task = await self._task(record.task_id, context)
            # A new task that exists is the answer (its store's recovery owns it from here); a
            # follow-up's task existed before it, so only its settled key says it was taken in.
            if task is not None and (record.settled or not claim.follow_up):
                return task
            # Settled without an answer to show, or claimed by a process that is gone: this
            # copy runs the message (of several copies, the one whose take-over wins).
            if (record.settled or not record.live) and await keys.take_over(owner, key.message_id):
                claim.task_id = record.task_id
                return None
            await asyncio.sleep(pause)  # the first copy is being taken in by a live process
            pause = min(pause * 2, FOLLOW_PAUSE_S[1])
            found = await keys.read(owner, key.message_id)
            if found is None:  # the first copy made nothing and let the key go: claim it anew
                new, found = await keys.claim(owner, key.message_id, key.fingerprint, claim.task_id)
                if new:
                    claim.task_id = found.task_id
                    return None
            record = found

    async def _follow(self, task: Task, context: ServerCallContext) -> AsyncIterator[Task]:
        """``task``, then the task again each time it changed, until it stops for the caller."""
        yield task
        pause = FOLLOW_PAUSE_S[0]
        while task.status.state not in STOPPED:
            await asyncio.sleep(pause)
            pause = min(pause * 2, FOLLOW_PAUSE_S[1])
            latest = await self._task(task.id, context)
            if latest is None:
                return
            if latest.status != task.status or len(latest.artifacts) != len(task.artifacts):
                yield latest
            task = latest

    async def _task(self, task_id: str, context: ServerCallContext) -> Task | None:
        found = await self.task_store.get(task_id, context)
        return found.task if isinstance(found, StoredTask) else found

    async def _stopped(self, task: Task, context: ServerCallContext) -> Task:
        last = task
        async for last in self._follow(task, context):  # noqa: B007 - the last one is the answer
            pass
        return last

    async def _settle(self, claim: SendClaim, answer: Event | Message | Task) -> None:
        reply = answer.SerializeToString() if isinstance(answer, Message) else None
        try:
            await claim.keys.settle(claim.owner, claim.key.message_id, reply)
        except Exception:  # the claim then lapses by itself: a resend finds the task
            logger.warning("task %s: could not settle its send key", claim.task_id, exc_info=True)

    async def _failed(self, claim: SendClaim, context: ServerCallContext) -> None:
        """The send raised: a task it made settles the key, nothing made forgets it."""
        try:
            if claim.follow_up or await self._task(claim.task_id, context) is None:
                await claim.keys.forget(claim.owner, claim.key.message_id)
            else:
                await claim.keys.settle(claim.owner, claim.key.message_id)
        except Exception:
            logger.warning("task %s: could not release its send key", claim.task_id, exc_info=True)
