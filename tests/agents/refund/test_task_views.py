"""WorkflowTaskSource.has_task answers what get_view would, from the workflow's row alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from accord.agents.refund.config import GRAPH_NAME
from accord.agents.refund.task_views import WorkflowTaskSource
from accord.contracts.errors import AccordError, ErrorCode
from accord.runtime.workflow import Graph, Runtime
from accord.runtime.workflow.events import EventType, NewEvent

OWNER = "accord/C-01"


async def _leaf(_state: Any) -> dict[str, Any]:
    return {}


@pytest.fixture
async def source(tmp_path: Path) -> AsyncIterator[WorkflowTaskSource]:
    runtime = Runtime(f"sqlite:///{tmp_path / 'workflows.db'}", auto_recover=False)
    runtime.register(Graph(GRAPH_NAME, "1").node("only", _leaf))
    await runtime.open()
    yield WorkflowTaskSource(runtime, "1.0.0")
    await runtime.close()


async def test_has_task_agrees_with_get_view(source: WorkflowTaskSource) -> None:
    refusal = AccordError(ErrorCode.INVALID_INPUT, "bad order id")
    await source.runtime.record_refused(
        GRAPH_NAME, "refused", {"owner": OWNER, "text": "?"}, refusal, scope=OWNER
    )
    # A row without its owner (appended without one): the first event's owner decides.
    started = NewEvent(
        EventType.WORKFLOW_STARTED,
        None,
        {"graph": GRAPH_NAME, "version": "1", "input": {"owner": OWNER, "text": "hi"}},
    )
    await source.runtime.log.append("unscoped", 0, [started])
    cases = [
        (task_id, scope)
        for task_id in ("refused", "unscoped", "absent")
        for scope in (OWNER, "accord/C-02", "other-app/C-01")
    ]
    found = {case: await source.has_task(*case) for case in cases}
    assert found == {case: await source.get_view(*case) is not None for case in cases}
    assert found[("refused", OWNER)]
    assert found[("unscoped", OWNER)]
    assert not found[("refused", "accord/C-02")]
    assert not found[("absent", OWNER)]
