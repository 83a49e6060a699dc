"""Push configs and the outbox in the agent's database (SQLite or PostgreSQL).

:class:`PushStore` is a2a-sdk's ``PushNotificationConfigStore`` (the SDK's request handler
serves create/get/list/delete through it, over JSON-RPC and HTTP+JSON), owner-scoped like the
task store: another principal's config does not exist for a caller. It refuses a config the
policy (policy.py) or the signing rule (signing.py) does not admit, with INVALID_INPUT and the
reason. It also keeps the outbox: :meth:`enqueue` records a notification for every config of a
task, :meth:`claim` hands due ones to the deliverer with a lease (another replica does not take
them meanwhile), :meth:`done` / :meth:`retry_later` settle them.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks.push_notification_config_store import (
    PushNotificationConfigStore,
    normalize_push_notification_config,
)
from a2a.types import TaskPushNotificationConfig, TaskState
from a2a.utils.errors import InvalidParamsError
from sqlalchemy import bindparam, delete, select, update

from accord.protocol.push.policy import PushUrlPolicy, PushUrlRefusedError
from accord.protocol.push.signing import MIN_TOKEN_CHARS
from accord.protocol.push.tables import push_schema, push_tables
from accord.protocol.storage.database import Database, Txn
from accord.protocol.storage.prepared import Prepared

CLAIM_LEASE_S: Final = 60.0  # a claimed notification is another replica's again after this
MAX_CONFIGS_PER_TASK: Final = 10
TERMINAL_STATES: Final = (
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
)


@dataclass(frozen=True, slots=True)
class Pending:
    """One notification to deliver, with the config it goes to."""

    id: str
    task_id: str
    attempts: int
    body: bytes
    config: TaskPushNotificationConfig


class PushStore(PushNotificationConfigStore):
    def __init__(
        self,
        url: str,
        *,
        table: str,
        policy: PushUrlPolicy | None = None,
        owner_resolver: OwnerResolver = resolve_user_scope,
    ) -> None:
        self.table = table
        self.configs, self.outbox = push_tables(table)
        self.db = Database(url, unavailable="the push notification store is unavailable")
        self.policy = policy or PushUrlPolicy.from_settings()
        self._owner = owner_resolver
        self._open_lock = asyncio.Lock()
        # Read for every event of every live task (the SDK asks before each notification):
        # compiled once, run on the driver (storage/prepared.py). In a mesh bench the Core
        # statement built per call was a tenth of an agent's CPU.
        c = self.configs
        by_task = select(c.c.owner, c.c.blob).where(c.c.task_id == bindparam("task_id"))
        self._of_task = Prepared(by_task.order_by(c.c.created_at))
        self._of_owner = Prepared(
            by_task.where(c.c.owner == bindparam("owner")).order_by(c.c.created_at)
        )

    async def open(self) -> None:
        """Migrate the tables and connect (once; later calls return at once)."""
        if self.db.is_open:
            return
        async with self._open_lock:
            if self.db.is_open:
                return
            await self.db.open(push_schema(self.table))
            if self.db.is_sqlite:
                # One process per SQLite file: what an earlier process had claimed or put off
                # is this one's now, and a start is a good moment to try it again.
                o = self.outbox
                await self.db.write(
                    lambda txn: txn.conn.execute(
                        update(o).where(o.c.due_at > txn.now).values(due_at=txn.now)
                    )
                )

    async def close(self) -> None:
        await self.db.close()

    # -- configs (a2a-sdk's interface) --------------------------------------------------------
    async def set_info(
        self,
        task_id: str,
        notification_config: TaskPushNotificationConfig,
        context: ServerCallContext,
    ) -> TaskPushNotificationConfig:
        config = normalize_push_notification_config(task_id, notification_config)
        if not config.id or config.id == task_id:
            config.id = uuid.uuid4().hex  # the SDK defaults it to the task id: one per task
        if len(config.token) < MIN_TOKEN_CHARS:
            raise InvalidParamsError(
                message=f"a push config needs a token of at least {MIN_TOKEN_CHARS} characters "
                "(every notification is signed with it)"
            )
        try:
            await self.policy.check(config.url)
        except PushUrlRefusedError as exc:
            raise InvalidParamsError(message=f"push URL refused: {exc}") from None
        owner = self._owner(context)
        c = self.configs
        await self.open()

        def write(txn: Txn) -> None:
            count = txn.conn.execute(
                select(c.c.id).where(c.c.owner == owner, c.c.task_id == task_id)
            ).all()
            if config.id not in {r[0] for r in count} and len(count) >= MAX_CONFIGS_PER_TASK:
                raise InvalidParamsError(
                    message=f"at most {MAX_CONFIGS_PER_TASK} push configs per task"
                )
            row = {
                "owner": owner,
                "task_id": task_id,
                "id": config.id,
                "blob": config.SerializeToString(),
                "created_at": txn.now,
            }
            stmt = self.db.insert(c).values(**row)
            txn.conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=[c.c.owner, c.c.task_id, c.c.id],
                    set_={"blob": stmt.excluded.blob},
                )
            )

        await self.db.write(write)
        return config

    async def get_info(
        self, task_id: str, context: ServerCallContext
    ) -> list[TaskPushNotificationConfig]:
        return [cfg for _, cfg in await self._configs(task_id, self._owner(context))]

    async def get_info_for_dispatch(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return [cfg for _, cfg in await self._configs(task_id, None)]

    async def owners_of(self, task_id: str) -> list[tuple[str, TaskPushNotificationConfig]]:
        """Every config of the task with the principal it belongs to (the delivery path)."""
        return await self._configs(task_id, None)

    async def delete_info(
        self, task_id: str, context: ServerCallContext, config_id: str | None = None
    ) -> None:
        c = self.configs
        where = (c.c.owner == self._owner(context)) & (c.c.task_id == task_id)
        if config_id:
            where &= c.c.id == config_id
        await self.open()
        await self.db.write(lambda txn: txn.conn.execute(delete(c).where(where)))

    async def _configs(
        self, task_id: str, owner: str | None
    ) -> list[tuple[str, TaskPushNotificationConfig]]:
        if owner is None:
            statement, params = self._of_task, {"task_id": task_id}
        else:
            statement, params = self._of_owner, {"task_id": task_id, "owner": owner}
        await self.open()
        rows = await self.db.read(lambda conn: statement.execute(conn, params).fetchall())
        return [(o, TaskPushNotificationConfig.FromString(bytes(b))) for o, b in rows]

    # -- the outbox ---------------------------------------------------------------------------
    async def enqueue(
        self, owner: str, config_id: str, task_id: str, change: str, state: int, body: bytes
    ) -> bool:
        """Record one notification of ``change`` (a state and its time) for one config, unless
        it is the change last recorded for it (or the config is gone); whether it was new."""
        o, c = self.outbox, self.configs
        key = (c.c.owner == owner) & (c.c.task_id == task_id) & (c.c.id == config_id)
        row = {
            "id": uuid.uuid4().hex,
            "owner": owner,
            "task_id": task_id,
            "config_id": config_id,
            "dedupe": f"{owner}\x1f{task_id}\x1f{config_id}\x1f{change}",
            "body": body,
            "attempts": 0,
        }

        def write(txn: Txn) -> bool:
            last = txn.conn.execute(select(c.c.last_change).where(key)).first()
            if last is None or last[0] == change:
                return False
            stmt = self.db.insert(o).values(**row, due_at=txn.now, created_at=txn.now)
            txn.conn.execute(stmt.on_conflict_do_nothing(index_elements=[o.c.dedupe]))
            txn.conn.execute(update(c).where(key).values(last_change=change, last_state=state))
            return True

        await self.open()
        return await self.db.write(write)

    async def unfinished_tasks(self) -> list[str]:
        """Tasks with a config whose last recorded state is not terminal (or none yet): what
        the re-check at start looks at, in case a change was not recorded before a crash."""
        c = self.configs
        done = [int(s) for s in TERMINAL_STATES]
        query = (
            select(c.c.task_id)
            .where(c.c.last_state.is_(None) | c.c.last_state.not_in(done))
            .distinct()
        )
        await self.open()
        return [r[0] for r in await self.db.read(lambda conn: conn.execute(query).all())]

    async def claim(self, limit: int) -> list[Pending]:
        """Due notifications, leased to this process for :data:`CLAIM_LEASE_S`."""
        o, c = self.outbox, self.configs
        query = (
            select(o.c.id, o.c.task_id, o.c.attempts, o.c.body, o.c.due_at, c.c.blob)
            .join(
                c,
                (c.c.owner == o.c.owner) & (c.c.task_id == o.c.task_id) & (c.c.id == o.c.config_id),
                isouter=True,
            )
            .where(o.c.due_at <= time.time())
            .order_by(o.c.due_at)
            .limit(limit)
        )

        def write(txn: Txn) -> list[Pending]:
            out: list[Pending] = []
            for nid, task_id, attempts, body, due_at, blob in txn.conn.execute(query).all():
                if blob is None:  # its config was deleted: nobody wants it any more
                    txn.conn.execute(delete(o).where(o.c.id == nid))
                    continue
                taken = txn.conn.execute(
                    update(o)
                    .where(o.c.id == nid, o.c.due_at == due_at)
                    .values(due_at=txn.now + CLAIM_LEASE_S)
                )
                if taken.rowcount:  # not claimed by another replica meanwhile
                    config = TaskPushNotificationConfig.FromString(bytes(blob))
                    out.append(Pending(nid, task_id, attempts, bytes(body), config))
            return out

        await self.open()
        return await self.db.write(write)

    async def done(self, ids: Sequence[str]) -> None:
        if ids:
            o = self.outbox
            await self.db.write(lambda txn: txn.conn.execute(delete(o).where(o.c.id.in_(ids))))

    async def retry_later(self, nid: str, attempts: int, delay_s: float) -> None:
        o = self.outbox
        await self.db.write(
            lambda txn: txn.conn.execute(
                update(o).where(o.c.id == nid).values(attempts=attempts, due_at=txn.now + delay_s)
            )
        )

    async def next_due(self) -> float | None:
        """When the earliest notification is due (seconds since the epoch), or None."""
        o = self.outbox
        await self.open()
        return await self.db.read(
            lambda conn: conn.execute(select(o.c.due_at).order_by(o.c.due_at).limit(1)).scalar()
        )
