"""Delivery of push notifications: from a state change to a POST, durably.

:class:`PushNotifications` is a2a-sdk's ``PushNotificationSender`` (the request handler calls
it with every event of a live task) and has :meth:`PushNotifications.task_changed` for agents
whose tasks change outside the handler (a workflow log: an approval resumes the caller's task
from another request). Either way a state change becomes one outbox row
per config (store.py) BEFORE anything is sent, and the delivery loop sends the rows:

- the URL is checked again (policy.py) right before each attempt: a host that now resolves
  to a private address is refused (DNS rebinding);
- redirects are never followed (a 3xx is a failure), timeouts are short (:data:`TIMEOUT`);
- a failure is retried with exponential backoff and jitter (:data:`BACKOFF_BASE_S` doubling up
  to :data:`BACKOFF_MAX_S`), for :data:`MAX_ATTEMPTS` attempts, then dropped with a warning;
  a 3xx, or a 4xx other than 408/425/429, is the receiver's final answer: dropped at once;
- a row is deleted only after a 2xx, so a process killed at any point resends it at its next
  start: delivery is at least once, and receivers drop repeats by ``X-Accord-Notification-Id``.

Each request carries what the caller's config asked for, as A2A 1.0.1 says: its
``authentication`` as ``Authorization: <scheme> <credentials>``, its ``token`` (if any) as
``X-A2A-Notification-Token``; Accord's own signature is added only when the token is long
enough to key it (signing.py). The configs whose task is gone are purged now and then (with
the task store's retention, store.py).

Only state changes are sent (Task and TaskStatusUpdateEvent, not artifact chunks); each is one
notification per config however many paths see it (a change is the state and its time, and a
config remembers the last one recorded). At start every task still followed (its last recorded
state not terminal) is read once more, so a change that happened just before a crash, before
it reached the outbox, is still sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Final

import httpx
from a2a.server.tasks.push_notification_sender import PushNotificationEvent, PushNotificationSender
from a2a.types import StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent
from a2a.utils.proto_utils import to_stream_response
from google.protobuf.json_format import MessageToDict

from accord.contracts.keys import PUSH_ID_HEADER, PUSH_SIGNATURE_HEADER, PUSH_TOKEN_HEADER
from accord.protocol.a2a.server.send_keys import TaskExists
from accord.protocol.push.policy import PushUrlRefusedError, pinned
from accord.protocol.push.signing import sign, signs
from accord.protocol.push.store import Pending, PushStore

logger = logging.getLogger(__name__)

TIMEOUT: Final = httpx.Timeout(5.0, connect=3.0)
MAX_ATTEMPTS: Final = 12  # with the backoff below: about 2.5 hours of a receiver being away
BACKOFF_BASE_S: Final = 0.5
BACKOFF_MAX_S: Final = 900.0
BATCH: Final = 32
IDLE_WAIT_S: Final = 30.0  # the loop looks at the outbox at least this often (other replicas)
_FINAL_4XX_RETRIED: Final = frozenset({408, 425, 429})

TaskReader = Callable[[str, str], Awaitable[Task | None]]
"""(task_id, owner scope) -> the task as that owner sees it (None: gone)."""


def backoff_s(attempts: int) -> float:
    """Delay before attempt ``attempts + 1``: exponential, capped, with full jitter on half."""
    delay: float = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1))
    return delay / 2 + random.uniform(0, delay / 2)


def _status_of(event: PushNotificationEvent) -> TaskStatus | None:
    if isinstance(event, Task | TaskStatusUpdateEvent) and event.HasField("status"):
        return event.status
    return None


def _dedupe(status: TaskStatus) -> str:
    ts = status.timestamp.ToNanoseconds() if status.HasField("timestamp") else 0
    return f"{int(status.state)}@{ts}"


def _body(response: StreamResponse) -> bytes:
    return json.dumps(MessageToDict(response), separators=(",", ":")).encode()


class PushNotifications(PushNotificationSender):
    def __init__(
        self,
        store: PushStore,
        reader: TaskReader,
        *,
        client: httpx.AsyncClient | None = None,
        task_exists: TaskExists | None = None,
    ) -> None:
        self.store = store
        self._reader = reader
        self._exists = task_exists  # None: configs are never purged (a store that cannot say)
        self._purged_at = 0.0  # monotonic time of the last purge
        self._client = client or httpx.AsyncClient(
            timeout=TIMEOUT, follow_redirects=False, trust_env=False
        )
        self._wake = asyncio.Event()
        self._changed: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self.delivered = 0  # notifications answered 2xx by their receiver (this process)

    # -- what the agent tells us --------------------------------------------------------------
    async def send_notification(self, task_id: str, event: PushNotificationEvent) -> None:
        """The SDK's hook (every event of a live task): record it for every config."""
        status = _status_of(event)
        if status is None:
            return
        configs = await self.store.owners_of(task_id)
        if not configs:
            return
        body = _body(to_stream_response(event))
        for owner, config in configs:
            await self.store.enqueue(
                owner, config.id, task_id, _dedupe(status), int(status.state), body
            )
        self._wake.set()

    def task_changed(self, task_id: str) -> None:
        """A task may have changed state outside the request handler: look at it soon (the
        caller is a hot path; the reading and recording happen in the loop)."""
        if task_id not in self._queued:
            self._queued.add(task_id)
            self._changed.put_nowait(task_id)

    async def _record_change(self, task_id: str) -> None:
        configs = await self.store.owners_of(task_id)
        views: dict[str, Task | None] = {}
        for owner, config in configs:
            if owner not in views:
                views[owner] = await self._reader(task_id, owner)
            task = views[owner]
            if task is None:
                continue
            body = _body(StreamResponse(task=task))
            change, state = _dedupe(task.status), int(task.status.state)
            await self.store.enqueue(owner, config.id, task_id, change, state, body)
        if configs:
            self._wake.set()

    # -- the loops ----------------------------------------------------------------------------
    async def run(self) -> None:
        """Record changes and deliver, until cancelled (for the life of the service)."""
        await self.store.open()
        # A change seen just before a crash may not have reached the outbox: look at every
        # task still followed once more (a change already recorded is not recorded again).
        for task_id in await self.store.unfinished_tasks():
            self.task_changed(task_id)
        watcher = asyncio.create_task(self._watch_changes(), name="push-changes")
        try:
            while True:
                try:
                    await self._purge_now_and_then()
                    await self.deliver_due()
                    wait = IDLE_WAIT_S
                    if (due := await self.store.next_due()) is not None:
                        wait = max(0.0, min(wait, due - time.time()))
                except Exception:  # the database may be away a moment; try again soon
                    logger.exception("push delivery loop failed; retrying")
                    wait = 1.0
                self._wake.clear()
                if wait > 0:
                    with contextlib.suppress(TimeoutError):  # due now, or another look
                        await asyncio.wait_for(self._wake.wait(), timeout=wait)
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            await self._client.aclose()

    async def _purge_now_and_then(self) -> None:
        if self._exists is None:
            return
        interval = min(600.0, max(1.0, self.store.retention_s / 10))  # as the task store's
        if time.monotonic() - self._purged_at >= interval:
            self._purged_at = time.monotonic()
            await self.store.purge(self._exists)

    async def _watch_changes(self) -> None:
        while True:
            task_id = await self._changed.get()
            self._queued.discard(task_id)
            try:
                await self._record_change(task_id)
            except Exception:
                logger.exception("push: could not record the change of task %s", task_id)

    async def deliver_due(self) -> None:
        while batch := await self.store.claim(BATCH):
            results = await asyncio.gather(*(self._attempt(p) for p in batch))
            await self.store.done(
                [p.id for p, settled in zip(batch, results, strict=True) if settled]
            )

    async def _attempt(self, pending: Pending) -> bool:
        """One delivery attempt; whether the row is settled (delivered or given up)."""
        url, attempt = pending.config.url, pending.attempts + 1
        try:
            addresses = await self.store.policy.check(url)  # again: DNS may answer otherwise now
        except PushUrlRefusedError as exc:
            logger.warning("push to %s for task %s refused: %s; dropped", url, pending.task_id, exc)
            return True
        request = pinned(url, addresses[0])  # to the address just checked, not a new lookup
        token = pending.config.token
        headers = {
            "Host": request.host_header,
            "Content-Type": "application/json",
            PUSH_ID_HEADER: pending.id,
        }
        if token:
            headers[PUSH_TOKEN_HEADER] = token
        if signs(token):
            headers[PUSH_SIGNATURE_HEADER] = sign(token, pending.id, pending.body)
        auth = pending.config.authentication
        if pending.config.HasField("authentication") and auth.scheme and auth.credentials:
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
        try:
            response = await self._client.post(
                request.url, content=pending.body, headers=headers, extensions=request.extensions
            )
            status = response.status_code
        except httpx.HTTPError as exc:
            status, why = 0, type(exc).__name__
        else:
            why = f"HTTP {status}"
        if 200 <= status < 300:
            self.delivered += 1
            return True
        # A redirect is never followed (it could point anywhere), so it is as final as a 4xx.
        final = 300 <= status < 500 and status not in _FINAL_4XX_RETRIED
        if final or attempt >= MAX_ATTEMPTS:
            logger.warning(
                "push to %s for task %s failed (%s) after %d attempt(s); dropped",
                url,
                pending.task_id,
                why,
                attempt,
            )
            return True
        delay = backoff_s(attempt)
        logger.info(
            "push to %s for task %s failed (%s); attempt %d in %.1f s",
            url,
            pending.task_id,
            why,
            attempt + 1,
            delay,
        )
        await self.store.retry_later(pending.id, attempt, delay)
        return False
