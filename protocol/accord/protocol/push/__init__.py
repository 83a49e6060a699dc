"""A2A push notifications for Accord agents (docs/push-notifications.md).

policy.py    where a notification may go (https, allow-list, public addresses)
signing.py   the HMAC signature on each request, and its check for receivers
tables.py    the configs and the outbox (one migration history per service)
store.py     a2a-sdk's PushNotificationConfigStore, owner-scoped, plus the outbox
delivery.py  from a state change to a signed POST: durable, retried, no redirects
"""

from __future__ import annotations

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.tasks.task_store import TaskStore
from a2a.types import Task

from accord.protocol.push.delivery import PushNotifications, TaskReader
from accord.protocol.push.policy import PushUrlPolicy, PushUrlRefusedError
from accord.protocol.push.signing import sign, verify
from accord.protocol.push.store import PushStore
from accord.protocol.push.tables import push_schema, push_table_name, push_tables

__all__ = [
    "PushNotifications",
    "PushStore",
    "PushUrlPolicy",
    "PushUrlRefusedError",
    "TaskReader",
    "owner_context",
    "push_schema",
    "push_table_name",
    "push_tables",
    "reader_of",
    "sign",
    "verify",
]


class _Owner(User):
    """The owner a config belongs to, as the task store resolves it (delivery has no caller)."""

    def __init__(self, owner: str) -> None:
        self._owner = owner

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._owner


def owner_context(owner: str) -> ServerCallContext:
    return ServerCallContext(user=_Owner(owner))


def reader_of(store: TaskStore) -> TaskReader:
    """Read a task as the owner of a config sees it, from the agent's own task store."""

    async def read(task_id: str, owner: str) -> Task | None:
        return await store.get(task_id, owner_context(owner))

    return read
