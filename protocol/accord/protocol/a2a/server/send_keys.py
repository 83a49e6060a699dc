"""SendKeys: the durable record of which request made which task (idempotent send).

A request is ``(owner, messageId)``. :meth:`SendKeys.claim` inserts its row or finds the one
already there, in one statement guarded by the primary key, so of two copies of a message
(one client retrying, or two replicas handed the same message at once) exactly one inserts and
runs it; the other reads the row: the same message (same fingerprint) is answered with what the
first one made, another message under the same id is IDEMPOTENCY_CONFLICT.

A row is *claimed* by the process that runs its message until the message's first answer is
out (the task exists, or the Message reply is recorded): it is then *settled*. A claim lasts
``ACCORD_TASK_WORKER_TTL_S`` past the database's clock and this process renews its claims while
it lives (:meth:`SendKeys.keep_alive`); a clean stop lets them lapse at once, and so does the
start of a SQLite process (one process per file: every earlier one is gone). So a row is always
either being worked on by a live process, or settled, or free to be taken over
(:meth:`SendKeys.take_over`) by the next copy of its message: nothing waits on a dead process.

Rows live as long as their task: :meth:`SendKeys.purge` deletes rows older than the task
retention whose task no longer exists (the task store's retention deleted it).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Row, and_, bindparam, delete, or_, select, update

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.server.send_tables import send_schema, send_table
from accord.protocol.settings import current
from accord.protocol.storage.database import Database, Txn

logger = logging.getLogger(__name__)

PURGE_BATCH: Final = 500

TaskExists = Callable[[str, str], Awaitable[bool]]
"""``(owner, task_id)`` -> whether the agent's task store still holds that task. Send keys and
push configs (push/store.py) both live as long as their task; app.task_exists answers both."""


@dataclass(frozen=True, slots=True)
class SentRequest:
    """One row: what was asked, what it made, and whose claim it is."""

    owner: str
    message_id: str
    fingerprint: str
    task_id: str
    reply: bytes | None
    worker: str | None  # None: settled
    live: bool  # the claim has not lapsed (by the database's clock)

    @property
    def settled(self) -> bool:
        return self.worker is None


class SendKeys:
    """The agent's ``a2a_sends_<service>`` table; see the module docstring."""

    def __init__(self, url: str, *, table: str, lease_s: float | None = None) -> None:
        self._table = send_table(table)
        self.table = table
        self.url = url
        self.worker = f"sender-{uuid.uuid4().hex}"
        self.lease_s = lease_s if lease_s else current().task_worker_ttl_s
        self.retention_s = current().task_retention_s
        self.db = Database(url, unavailable="the send keys are unavailable")
        self._held: set[tuple[str, str]] = set()  # claims this process renews
        self._open_lock = asyncio.Lock()
        self._purged_at = 0.0
        t = self._table
        self._key = and_(t.c.owner == bindparam("k_owner"), t.c.message_id == bindparam("k_mid"))
        self._insert = (
            self.db.insert(t)
            .values(
                owner=bindparam("k_owner"),
                message_id=bindparam("k_mid"),
                fingerprint=bindparam("k_fingerprint"),
                task_id=bindparam("k_task"),
                worker=bindparam("k_me"),
                lease_until=self.db.clock() + bindparam("lease"),
                created_at=self.db.clock(),
            )
            .on_conflict_do_nothing(index_elements=[t.c.owner, t.c.message_id])
            .returning(t.c.message_id)
        )
        self._select = select(
            t.c.owner,
            t.c.message_id,
            t.c.fingerprint,
            t.c.task_id,
            t.c.reply,
            t.c.worker,
            (t.c.lease_until > self.db.clock()).label("live"),
        ).where(self._key)
        lapsed = or_(t.c.worker.is_(None), t.c.lease_until <= self.db.clock())
        self._take = (
            update(t)
            .where(self._key, lapsed, t.c.reply.is_(None))
            .values(worker=bindparam("k_me"), lease_until=self.db.clock() + bindparam("lease"))
        )
        mine = and_(self._key, t.c.worker == bindparam("k_me"))
        self._renew = update(t).where(mine).values(lease_until=self.db.clock() + bindparam("lease"))
        self._settle = update(t).where(mine).values(worker=None, lease_until=0.0, reply=None)
        self._settle_reply = (
            update(t)
            .where(mine)
            .values(worker=None, lease_until=0.0, reply=bindparam("reply_blob"))
        )
        self._release = update(t).where(mine).values(lease_until=0.0)
        self._forget = delete(t).where(mine)
        self._old = (
            select(t.c.owner, t.c.message_id, t.c.task_id, t.c.reply, t.c.created_at)
            .where(
                t.c.created_at < bindparam("before"),
                t.c.created_at > bindparam("after"),
                t.c.worker.is_(None),
            )
            .order_by(t.c.created_at)
            .limit(PURGE_BATCH)
        )
        self._drop = delete(t).where(self._key, t.c.worker.is_(None))

    # -- lifecycle --------------------------------------------------------------------------
    async def open(self) -> SendKeys:
        """Migrate the table and connect (once). A SQLite file has one process: the claims of
        every earlier process lapse now, so a resend after a restart is taken over at once."""
        if not self.db.is_open:
            async with self._open_lock:
                if not self.db.is_open:
                    await self.db.open(send_schema(self._table))
                    if self.db.is_sqlite:
                        t = self._table
                        lapse = update(t).where(t.c.worker.is_not(None)).values(lease_until=0.0)
                        await self.db.write(lambda txn: txn.conn.execute(lapse))
        return self

    async def close(self) -> None:
        """Let this process's claims lapse (a clean stop: another replica may take them over
        at once), then disconnect."""
        if self.db.is_open and self._held:
            params = [self._params(owner, mid) for owner, mid in self._held]
            await self.db.write(lambda txn: txn.conn.execute(self._release, params))
            self._held.clear()
        await self.db.close()

    async def keep_alive(self, exists: TaskExists) -> None:
        """Renew this process's claims every third of the lease and purge old keys now and
        then, until cancelled (it runs for the life of the service)."""
        while True:
            try:
                await self.renew()
                interval = min(600.0, max(1.0, self.retention_s / 10))
                if time.monotonic() - self._purged_at >= interval:
                    self._purged_at = time.monotonic()
                    await self.purge(exists)
            except Exception:  # the database may be away a moment; try again next beat
                logger.exception("send keys %s: renewal failed", self.table)
            await asyncio.sleep(self.lease_s / 3)

    async def renew(self) -> None:
        if not self._held:
            return
        params = [{**self._params(owner, mid), "lease": self.lease_s} for owner, mid in self._held]
        await self.db.write(lambda txn: txn.conn.execute(self._renew, params))

    # -- one request ------------------------------------------------------------------------
    async def claim(
        self, owner: str, message_id: str, fingerprint: str, task_id: str
    ) -> tuple[bool, SentRequest]:
        """Insert the request's row (True: this process claims it and runs the message) or
        find the one already there (False). The same id with another fingerprint is
        IDEMPOTENCY_CONFLICT."""
        await self.open()
        params = {
            **self._params(owner, message_id),
            "k_fingerprint": fingerprint,
            "k_task": task_id,
            "lease": self.lease_s,
        }

        def run(txn: Txn) -> tuple[bool, Row[Any]]:
            inserted = txn.conn.execute(self._insert, params).first() is not None
            return inserted, txn.conn.execute(self._select, params).one()

        inserted, row = await self.db.write(run)
        found = _request(row)
        if found.fingerprint != fingerprint:
            raise AccordError(
                ErrorCode.IDEMPOTENCY_CONFLICT,
                "this messageId was already sent with other content: a new message needs a "
                "new messageId",
                {"field": "message.messageId"},
            )
        if inserted:
            self._held.add((owner, message_id))
        return inserted, found

    async def read(self, owner: str, message_id: str) -> SentRequest | None:
        await self.open()
        params = self._params(owner, message_id)
        row = await self.db.read(lambda conn: conn.execute(self._select, params).first())
        return _request(row) if row is not None else None

    async def take_over(self, owner: str, message_id: str) -> bool:
        """Claim a row nobody works on (its claim lapsed, or it settled without an answer);
        True when this process now holds it (of several contenders, one does)."""
        params = {**self._params(owner, message_id), "lease": self.lease_s}
        taken = await self.db.write(lambda txn: txn.conn.execute(self._take, params).rowcount)
        if taken:
            self._held.add((owner, message_id))
        return bool(taken)

    async def settle(self, owner: str, message_id: str, reply: bytes | None = None) -> None:
        """The message's first answer is out: the task exists (or ``reply`` is the answer)."""
        await self._end(owner, message_id, self._settle_reply if reply else self._settle, reply)

    async def forget(self, owner: str, message_id: str) -> None:
        """The message made nothing (refused before any task): a resend runs it afresh."""
        await self._end(owner, message_id, self._forget, None)

    def let_go(self, owner: str, message_id: str) -> None:
        """Stop renewing a claim (its request ended without an answer): it lapses by itself."""
        self._held.discard((owner, message_id))

    async def _end(self, owner: str, message_id: str, statement: Any, reply: bytes | None) -> None:
        if (owner, message_id) not in self._held:
            return
        params = {**self._params(owner, message_id), "reply_blob": reply}
        try:
            await self.db.write(lambda txn: txn.conn.execute(statement, params))
        finally:
            self._held.discard((owner, message_id))

    # -- retention --------------------------------------------------------------------------
    async def purge(self, exists: TaskExists) -> int:
        """Delete settled rows older than the task retention whose task is gone; how many."""
        await self.open()
        before = time.time() - self.retention_s
        after = -1.0  # before every row (created_at is a time since the epoch)
        total = 0
        while True:
            rows = await self._older(before, after)
            gone = [
                self._params(owner, mid)
                for owner, mid, task_id, reply, _created in rows
                if reply is not None or not await exists(owner, task_id)
            ]
            if gone:
                await self._delete(gone)
                total += len(gone)
            if len(rows) < PURGE_BATCH:
                break
            after = float(rows[-1].created_at)
        if total:
            logger.info("send keys %s: deleted %d key(s) past retention", self.table, total)
        return total

    async def _older(self, before: float, after: float) -> list[Any]:
        params = {"before": before, "after": after}
        return list(await self.db.read(lambda conn: conn.execute(self._old, params).all()))

    async def _delete(self, keys: list[dict[str, Any]]) -> None:
        await self.db.write(lambda txn: txn.conn.execute(self._drop, keys))

    def _params(self, owner: str, message_id: str) -> dict[str, Any]:
        # Not the columns' own names: SQLAlchemy reserves those in an UPDATE's parameters.
        return {"k_owner": owner, "k_mid": message_id, "k_me": self.worker}


def _request(row: Row[Any]) -> SentRequest:
    reply, worker = row.reply, row.worker
    return SentRequest(
        owner=str(row.owner),
        message_id=str(row.message_id),
        fingerprint=str(row.fingerprint),
        task_id=str(row.task_id),
        reply=bytes(reply) if reply is not None else None,
        worker=str(worker) if worker is not None else None,
        live=bool(row.live),
    )
