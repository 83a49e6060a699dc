"""Push configs are deleted with their task (issue #32): tasks are deleted by the task store's
retention (finished ones, ``ACCORD_TASK_RETENTION_S`` after their last change), and the push
store's purge then deletes the configs, and the undelivered notifications, of every task it no
longer holds; the delivery loop runs it."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

from a2a.types import Task, TaskPushNotificationConfig, TaskState, TaskStatus

from accord.protocol.a2a.server.app import task_exists
from accord.protocol.a2a.server.store import AccordTaskStore
from accord.protocol.push.delivery import PushNotifications
from accord.protocol.push.owners import owner_context
from tests.protocol.push.store_support import db_url, make_store

ALICE = "accord/C-01"


def _task(task_id: str, state: TaskState, when: datetime) -> Task:
    task = Task(id=task_id, context_id="c-1", status=TaskStatus(state=state))
    task.status.timestamp.FromDatetime(when)
    return task


async def test_configs_go_with_their_task(tmp_path: Path) -> None:
    tasks = AccordTaskStore(db_url(tmp_path), table="a2a_tasks_test")
    pushes = make_store(tmp_path)
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    tasks.retention_s = pushes.retention_s = 3600.0
    await tasks.save(_task("done", TaskState.TASK_STATE_COMPLETED, long_ago), owner_context(ALICE))
    await tasks.save(
        _task("waiting", TaskState.TASK_STATE_INPUT_REQUIRED, long_ago), owner_context(ALICE)
    )
    for task_id in ("done", "waiting"):
        for n in range(2):
            config = TaskPushNotificationConfig(id=f"cfg-{n}", url="http://127.0.0.1:9/hook")
            await pushes.set_info(task_id, config, owner_context(ALICE))
    push = PushNotifications(pushes, lambda *_: asyncio.sleep(0, None))
    await push.send_notification("done", _task("done", TaskState.TASK_STATE_COMPLETED, long_ago))
    assert await pushes.next_due() is not None  # undelivered, for both configs

    # Configs younger than the retention are never purged: a config is made just before its
    # task is first saved (message/send with a push config).
    assert await pushes.purge(task_exists(tasks)) == 0
    pushes.retention_s = 0.0
    assert await pushes.purge(task_exists(tasks)) == 0  # both tasks still exist

    assert await tasks.purge_finished() == 1  # the task store's retention deletes "done"
    assert await pushes.purge(task_exists(tasks)) == 2
    assert await pushes.get_info("done", owner_context(ALICE)) == []
    assert len(await pushes.get_info("waiting", owner_context(ALICE))) == 2
    assert await pushes.next_due() is None  # its undelivered notifications went too
    await pushes.close()
    await tasks.close()


async def test_the_delivery_loop_purges(tmp_path: Path) -> None:
    pushes = make_store(tmp_path)
    pushes.retention_s = 0.0
    config = TaskPushNotificationConfig(id="cfg", url="http://127.0.0.1:9/hook")
    await pushes.set_info("gone", config, owner_context(ALICE))

    async def never(owner: str, task_id: str) -> bool:
        del owner, task_id
        return False

    push = PushNotifications(pushes, lambda *_: asyncio.sleep(0, None), task_exists=never)
    running = asyncio.create_task(push.run())
    try:
        deadline = time.monotonic() + 20
        while await pushes.get_info("gone", owner_context(ALICE)):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await pushes.close()
