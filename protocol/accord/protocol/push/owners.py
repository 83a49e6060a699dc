"""The owner a push config belongs to, as delivery reads tasks and configs: delivery runs in
the background, with no caller, so it reads as the task's owner."""

from __future__ import annotations

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.tasks.task_store import TaskStore
from a2a.types import Task

from accord.protocol.push.delivery import TaskReader


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
