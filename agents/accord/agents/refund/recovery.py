"""Start-up: take over the previous incarnation's workflows, and reconcile the task store.

The task store's own start-up recovery would FAIL every task left running, which is wrong
here: those tasks' workflows resume. Instead, after the runtime has recovered its workflows:

- a task whose workflow ended or waits is projected (the crash may have come between the
  workflow's last event and the SDK's save of the task);
- a task whose workflow runs is left alone: recovery finishes it and the projector writes it;
- a task with no workflow at all (a crash before the workflow started, or an approver's
  refund.approve task) is failed with UNAVAILABLE, like any agent's interrupted task, unless
  task recovery is off (``ACCORD_TASK_RECOVERY=off``, several replicas): such a task may be
  another live replica's work in progress (docs/replicas.md).

The previous process's owner id is kept in the data directory, so a restarted orchestrator
declares it dead at once instead of waiting out its lease (single replica per data dir).
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Final

from a2a.types import Task, TaskState

from accord.agents.refund.projection import Projector
from accord.agents.workflow import Runtime
from accord.contracts.errors import AccordError
from accord.contracts.status import Status
from accord.protocol.a2a.store import (
    UNFINISHED_STATES,
    AccordTaskStore,
    Row,
    fail_after_restart,
    task_row,
)

logger = logging.getLogger(__name__)

OWNER_FILE: Final = "orchestrator-owner"
OPEN_STATES: Final = (*UNFINISHED_STATES, TaskState.TASK_STATE_INPUT_REQUIRED)


def new_owner() -> str:
    return f"orchestrator-{uuid.uuid4().hex}"


async def take_over(runtime: Runtime, data_dir: Path) -> None:
    """Open the runtime, declaring the previous owner (recorded in ``data_dir``) dead first."""
    path = data_dir / OWNER_FILE
    previous = path.read_text().strip() if path.exists() else ""
    await runtime.log.open()
    if previous and previous != runtime.owner:
        await runtime.log.drop_owner(previous)
    path.write_text(runtime.owner)
    await runtime.open()


async def reconcile(
    store: AccordTaskStore, runtime: Runtime, projector: Projector, *, fail_orphans: bool = True
) -> None:
    backend = await store.open()
    open_tasks: list[str] = []

    def collect(blob: bytes) -> Row:
        task = Task.FromString(blob)
        open_tasks.append(task.id)
        return task_row(task, blob)

    await backend.rewrite_states([int(s) for s in OPEN_STATES], collect)
    orphans: set[str] = set()
    for task_id in open_tasks:
        record = await runtime.log.record(task_id)
        if record is None:
            orphans.add(task_id)
        elif record.closed or record.status is not Status.RUNNING:
            try:
                await projector.project(task_id, await runtime.snapshot(task_id))
            except AccordError as error:
                logger.warning("task %s: not reconciled: %s", task_id, error.code.value)
    if not orphans or not fail_orphans:
        return

    def fail(blob: bytes) -> Row:
        task = Task.FromString(blob)
        if task.id in orphans and task.status.state in UNFINISHED_STATES:
            fail_after_restart(task)
        return task_row(task)

    await backend.rewrite_states([int(s) for s in UNFINISHED_STATES], fail)
