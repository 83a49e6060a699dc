"""Push configs and the outbox in the agent's database (SQLite or PostgreSQL).

:class:`PushStore` is a2a-sdk's ``PushNotificationConfigStore`` (the SDK's request handler
serves create/get/list/delete through it, over JSON-RPC and HTTP+JSON), owner-scoped like the
task store: another principal's config does not exist for a caller. It refuses a config whose
URL the policy (policy.py) does not admit, with INVALID_INPUT and the reason; a ``token`` is
optional, as in A2A 1.0.1 (signing.py says when one signs). The caller's secrets (the token and
``authentication.credentials``) are sealed in the row (secrets.py) and left out of every config
it answers with (create, get, list): a caller who registered them knows them, and nobody else
may read them back. It also keeps the outbox: :meth:`enqueue` records a notification for every
config of a task, :meth:`claim` hands due ones to the deliverer with a lease (another replica
does not take them meanwhile), :meth:`done` / :meth:`retry_later` settle them. Configs go with
their task: :meth:`purge` deletes those whose task the task store no longer holds (its retention).
"""

from __future__ import annotations

import asyncio
import logging
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

from accord.protocol.a2a.server.send_keys import TaskExists
from accord.protocol.push.policy import PushUrlPolicy, PushUrlRefusedError
from accord.protocol.push.secrets import (
    Credentials,
    PushSecrets,
    PushSecretsError,
    configured_key,
)
from accord.protocol.push.tables import push_schema, push_tables
from accord.protocol.settings import current
from accord.protocol.storage.database import Database, Txn
from accord.protocol.storage.prepared import Prepared

logger = logging.getLogger(__name__)

CLAIM_LEASE_S: Final = 60.0  # a claimed notification is another replica's again after this
MAX_CONFIGS_PER_TASK: Final = 10
PURGE_BATCH: Final = 500
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


def public(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """``config`` without its caller's secrets: what is stored in clear and answered."""
    out = TaskPushNotificationConfig()
    out.CopyFrom(config)
    out.ClearField("token")
    if out.HasField("authentication"):
        out.authentication.ClearField("credentials")
    return out


def _credentials(config: TaskPushNotificationConfig) -> Credentials:
    auth = config.authentication.credentials if config.HasField("authentication") else ""
    return Credentials(config.token, auth)


class PushStore(PushNotificationConfigStore):
    def __init__(
        self,
        url: str,
        *,
        table: str,
        policy: PushUrlPolicy | None = None,
        owner_resolver: OwnerResolver = resolve_user_scope,
        secrets: PushSecrets | None = None,
    ) -> None:
        self.table = table
        self.retention_s = current().task_retention_s
        self._secrets = secrets  # made from the configured key at open() when not given
        self.configs, self.outbox = push_tables(table)
        self.db = Database(url, unavailable="the push notification store is unavailable")
        self.policy = policy or PushUrlPolicy.from_settings()
        self._owner = owner_resolver
        self._open_lock = asyncio.Lock()
        # Read for every event of every live task (the SDK asks before each notification):
        # compiled once, run on the driver (storage/prepared.py). In a mesh bench the Core
        # statement built per call was a tenth of an agent's CPU.
        c = self.configs
        by_task = select(c.c.owner, c.c.blob, c.c.secrets).where(
            c.c.task_id == bindparam("task_id")
        )
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
            if self._secrets is None:
                self._secrets = PushSecrets(configured_key())
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
        try:
            await self.policy.check(config.url)
        except PushUrlRefusedError as exc:
            raise InvalidParamsError(message=f"push URL refused: {exc}") from None
        owner = self._owner(context)
        c = self.configs
        await self.open()
        answer, given = public(config), _credentials(config)
        sealed = self._seal(given, owner, task_id, config.id) if given else None

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
                "blob": answer.SerializeToString(),
                "secrets": sealed,
                "created_at": txn.now,
            }
            stmt = self.db.insert(c).values(**row)
            txn.conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=[c.c.owner, c.c.task_id, c.c.id],
                    set_={"blob": stmt.excluded.blob, "secrets": stmt.excluded.secrets},
                )
            )

        await self.db.write(write)
        return answer

    async def get_info(
        self, task_id: str, context: ServerCallContext
    ) -> list[TaskPushNotificationConfig]:
        """The caller's configs of the task, as answered (get and list): no secrets."""
        return [cfg for _, cfg in await self._configs(task_id, self._owner(context))]

    async def get_info_for_dispatch(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """Every config of the task, with its secrets (a sender's, never an answer's)."""
        return [cfg for _, cfg in await self._configs(task_id, None, secrets=True)]

    async def owners_of(self, task_id: str) -> list[tuple[str, TaskPushNotificationConfig]]:
        """Every config of the task with the principal it belongs to, without its secrets
        (the delivery path records notifications by id; :meth:`claim` opens the secrets)."""
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

    async def purge(self, exists: TaskExists) -> int:
        """Delete the configs (and undelivered notifications) of tasks the task store no
        longer holds, among configs older than the task retention (a config may be made just
        before its task is first saved); how many configs. A task gone sooner (deleted
        through the SDK) takes its configs at the next purge: the outbox drops what is left."""
        await self.open()
        before = time.time() - self.retention_s
        after = ("", "")
        total = 0
        while True:
            pairs = await self._older_tasks(before, after)
            gone = [pair for pair in pairs if not await exists(*pair)]
            if gone:
                total += await self._drop_tasks(gone)
            if len(pairs) < PURGE_BATCH:
                break
            after = pairs[-1]
        if total:
            logger.info("push store %s: deleted %d config(s) of deleted tasks", self.table, total)
        return total

    async def _older_tasks(self, before: float, after: tuple[str, str]) -> list[tuple[str, str]]:
        """(owner, task) of configs made before ``before``, the next page after ``after``."""
        c = self.configs
        query = (
            select(c.c.owner, c.c.task_id)
            .where(
                c.c.created_at < before,
                (c.c.owner > after[0]) | ((c.c.owner == after[0]) & (c.c.task_id > after[1])),
            )
            .group_by(c.c.owner, c.c.task_id)
            .order_by(c.c.owner, c.c.task_id)
            .limit(PURGE_BATCH)
        )
        rows = await self.db.read(lambda conn: conn.execute(query).all())
        return [(str(owner), str(task_id)) for owner, task_id in rows]

    async def _drop_tasks(self, gone: list[tuple[str, str]]) -> int:
        c, o = self.configs, self.outbox

        def drop(txn: Txn) -> int:
            count = 0
            for owner, task_id in gone:
                mine = (c.c.owner == owner) & (c.c.task_id == task_id)
                count += txn.conn.execute(delete(c).where(mine)).rowcount
                txn.conn.execute(delete(o).where(o.c.owner == owner, o.c.task_id == task_id))
            return count

        return await self.db.write(drop)

    async def _configs(
        self, task_id: str, owner: str | None, *, secrets: bool = False
    ) -> list[tuple[str, TaskPushNotificationConfig]]:
        if owner is None:
            statement, params = self._of_task, {"task_id": task_id}
        else:
            statement, params = self._of_owner, {"task_id": task_id, "owner": owner}
        await self.open()
        rows = await self.db.read(lambda conn: statement.execute(conn, params).fetchall())
        out = []
        for o, blob, sealed in rows:
            config = TaskPushNotificationConfig.FromString(bytes(blob))
            out.append((o, self._opened(o, task_id, config, sealed) if secrets else public(config)))
        return out

    # -- the caller's secrets (secrets.py) ----------------------------------------------------
    def _row_key(self, owner: str, task_id: str, config_id: str) -> str:
        return f"{self.table}\x1f{owner}\x1f{task_id}\x1f{config_id}"

    def _seal(self, given: Credentials, owner: str, task_id: str, config_id: str) -> bytes:
        assert self._secrets is not None  # open() made it
        return self._secrets.seal(given, self._row_key(owner, task_id, config_id))

    def _opened(
        self,
        owner: str,
        task_id: str,
        stored: TaskPushNotificationConfig,
        sealed: bytes | None,
    ) -> TaskPushNotificationConfig:
        """The config with its secrets back in (raises PushSecretsError: another key).

        Secrets in clear in the blob win: this release never writes them there, so they were
        written by the previous one (a row from before migration 0002, or an older replica's
        update during a rolling upgrade, which leaves a stale ``secrets`` beside them)."""
        if _credentials(stored) or sealed is None:
            return stored
        assert self._secrets is not None  # open() made it
        given = self._secrets.open(bytes(sealed), self._row_key(owner, task_id, stored.id))
        config = TaskPushNotificationConfig()
        config.CopyFrom(stored)
        config.token = given.token
        if given.credentials:
            config.authentication.credentials = given.credentials
        return config

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
            select(
                o.c.id,
                o.c.owner,
                o.c.task_id,
                o.c.attempts,
                o.c.body,
                o.c.due_at,
                c.c.blob,
                c.c.secrets,
            )
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
            rows = txn.conn.execute(query).all()
            for nid, owner, task_id, attempts, body, due_at, blob, sealed in rows:
                if blob is None:  # its config was deleted: nobody wants it any more
                    txn.conn.execute(delete(o).where(o.c.id == nid))
                    continue
                taken = txn.conn.execute(
                    update(o)
                    .where(o.c.id == nid, o.c.due_at == due_at)
                    .values(due_at=txn.now + CLAIM_LEASE_S)
                )
                if not taken.rowcount:  # claimed by another replica meanwhile
                    continue
                stored = TaskPushNotificationConfig.FromString(bytes(blob))
                try:
                    config = self._opened(owner, task_id, stored, sealed)
                except PushSecretsError as exc:
                    # Kept, leased: it is tried again when the lease ends (the key may be
                    # put right); sent without the caller's credentials, it would be refused.
                    logger.warning("push for task %s not sent: %s", task_id, exc)
                    continue
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
