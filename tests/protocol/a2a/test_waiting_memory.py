"""A task that stopped to wait lives in the store alone (#35): once its request is answered,
the request handler keeps nothing of it in memory (no SDK ActiveTask, none of its producer,
consumer or idle-release asyncio tasks), and an answer, a subscription and a cancel still
find it, from the store. Through the real A2A app (the gate, the idempotent handler, the
durable task store), served in-process; the test agent is tests/protocol/a2a/agent_app.py.
The figures per waiting request are bench/waiting.py's.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.server.agent_execution.active_task import ActiveTask
from a2a.server.context import ServerCallContext
from a2a.server.routes.common import StarletteUser
from a2a.types import SubscribeToTaskRequest, Task, TaskState
from starlette.applications import Starlette

from accord.contracts.keys import SKILL_META_KEY
from accord.protocol.a2a.server import build_agent_app
from accord.protocol.a2a.server.gate import PrincipalUser
from accord.protocol.a2a.server.turn import PRINCIPAL_STATE_KEY
from accord.protocol.auth import Principal, mint_token
from accord.protocol.settings import ServeOptions
from tests.protocol.a2a import agent_app

BASE = "http://127.0.0.1:8797"
WAITING = 50
RELEASE_DEADLINE_S = 15.0  # seconds, not the 30 s a waiting task used to stay (the rest is load)


@pytest.fixture
async def agent(data_dir: Path) -> AsyncIterator[tuple[Starlette, httpx.AsyncClient]]:
    options = ServeOptions(port=8797, database_url=f"sqlite:///{data_dir / 'waiting.db'}")
    app = build_agent_app(
        agent_app.CONTRACT,
        agent_app.TestExecutor(agent_app.CONTRACT),
        options,
        service_name="waiting",
    )
    token = mint_token("C-01", ["customer"])
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url=BASE,
            headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
            timeout=30.0,
        ) as client,
    ):
        yield app, client


def _message(data: dict[str, Any] | None = None, text: str = "", task_id: str = "") -> Any:
    parts: list[dict[str, Any]] = [{"data": data}] if data is not None else [{"text": text}]
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": parts,
        "metadata": {SKILL_META_KEY: "echo"},
    }
    if task_id:
        message["taskId"] = task_id
    return {"message": message}


async def _rpc(http: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    r = await http.post("/", json=body)
    if method == "SendStreamingMessage":
        lines = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:")]
        events = [json.loads(line)["result"] for line in lines]
        last = events[-1]["statusUpdate"]
        return last["status"]["state"], last["taskId"]
    answer = r.json()
    assert "error" not in answer, answer
    return answer["result"]


def _held(task_ids: set[str]) -> list[str]:
    """What of these tasks the process still holds: ActiveTask objects and asyncio tasks."""
    gc.collect()
    held = [f"ActiveTask {o.task_id}" for o in gc.get_objects() if isinstance(o, ActiveTask)]
    held = [h for h in held if h.split()[-1] in task_ids]
    for task in asyncio.all_tasks():
        name = task.get_name()
        if ":" in name and name.split(":", 1)[1] in task_ids:
            held.append(name)  # producer:ID, consumer:ID, idle-release:ID
    return held


async def _until_released(task_ids: set[str]) -> None:
    """Look every 0.2 s (the release runs in this loop: let it) until nothing is held."""
    end = time.monotonic() + RELEASE_DEADLINE_S
    held = _held(task_ids)
    for _ in range(int(RELEASE_DEADLINE_S / 0.2)):
        if not held or time.monotonic() > end:
            break
        await asyncio.sleep(0.2)
        held = _held(task_ids)
    assert held == [], f"{len(held)} still held, e.g. {held[:3]}"


async def test_waiting_tasks_leave_nothing_in_memory_and_still_work(
    agent: tuple[Starlette, httpx.AsyncClient],
) -> None:
    app, http = agent
    ids: list[str] = []
    for i in range(WAITING):  # blocking and streaming sends, as clients use both
        if i % 2:
            state, task_id = await _rpc(http, "SendStreamingMessage", _message({"mode": "ask"}))
        else:
            task = (await _rpc(http, "SendMessage", _message({"mode": "ask"})))["task"]
            state, task_id = task["status"]["state"], task["id"]
        assert state == "TASK_STATE_INPUT_REQUIRED"
        ids.append(task_id)
    await _until_released(set(ids))

    # An answer continues a task picked up from the store.
    answered = (await _rpc(http, "SendMessage", _message(text="42", task_id=ids[0])))["task"]
    assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answered["artifacts"][0]["parts"][0]["data"]["echo"] == "42"
    # A subscription starts with the task as the store has it.
    principal = Principal(subject="C-01", roles=frozenset({"customer"}))
    context = ServerCallContext(
        user=StarletteUser(PrincipalUser(principal)), state={PRINCIPAL_STATE_KEY: principal}
    )
    handler = app.state.request_handler
    events = handler.on_subscribe_to_task(SubscribeToTaskRequest(id=ids[1]), context)
    first = await anext(events)
    await events.aclose()
    assert isinstance(first, Task)
    assert (first.id, first.status.state) == (ids[1], TaskState.TASK_STATE_INPUT_REQUIRED)
    # A cancel ends one.
    canceled = await _rpc(http, "CancelTask", {"id": ids[2]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    still = await _rpc(http, "GetTask", {"id": ids[3]})
    assert still["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    # And what those requests picked up is dropped again.
    await _until_released(set(ids))


async def test_a_request_that_finds_its_task_dropped_meanwhile_runs_from_the_store(
    agent: tuple[Starlette, httpx.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drop races a request that looked the task up a moment before: the SDK then refuses
    it ("already completed") although the store has it waiting. Here the drop comes exactly
    there, once per request, and the answer and the subscription still go through."""
    app, http = agent
    registry = app.state.request_handler._active_task_registry  # noqa: SLF001 - the SDK holds it
    found = registry.get_or_create

    async def dropped_after_lookup(*args: Any, **kwargs: Any) -> ActiveTask:
        active: ActiveTask = await found(*args, **kwargs)
        task_id = kwargs.get("task_id", args[0] if args else None)
        if task_id in waiting and task_id not in dropped:
            dropped.add(task_id)
            await active.aclose()  # what the idle release does, at the worst moment
        return active

    waiting: set[str] = set()
    dropped: set[str] = set()
    for _ in range(2):
        task = (await _rpc(http, "SendMessage", _message({"mode": "ask"})))["task"]
        waiting.add(task["id"])
    await _until_released(waiting)
    monkeypatch.setattr(registry, "get_or_create", dropped_after_lookup, raising=False)
    first, second = sorted(waiting)
    answered = (await _rpc(http, "SendMessage", _message(text="7", task_id=first)))["task"]
    assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
    state, task_id = await _rpc(http, "SendStreamingMessage", _message(text="8", task_id=second))
    assert (state, task_id) == ("TASK_STATE_COMPLETED", second)
    assert dropped == waiting
