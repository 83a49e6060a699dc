"""An agent decides per turn how it answers (#32): a task that carries only the artifacts the
agent gave (no empty ``result`` DataPart in front of a text answer), and, for an executor with
``may_reply``, a Message on a first turn whatever the skill's ``reply`` says. Through the real
A2A app as tests/protocol/a2a/test_agent_api.py; tests/protocol/a2a/rich_agent.py is the agent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.types import Artifact, Part, StreamResponse, Task, TaskState, TaskStatus
from google.protobuf.json_format import ParseDict

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import RESULT_ARTIFACT_NAME, SKILL_META_KEY
from accord.contracts.status import Status
from accord.protocol.a2a import ContractExecutor
from accord.protocol.a2a.client import A2AClient
from accord.protocol.a2a.client.view import TaskTracker, view_of_task
from accord.protocol.a2a.server import build_agent_app
from accord.protocol.a2a.wire import data_part
from accord.protocol.auth import mint_token
from accord.protocol.settings import ServeOptions
from tests.protocol.a2a.rich_agent import CONTRACT, DecidingExecutor, RichExecutor

BASE = "http://127.0.0.1:8798"


async def _app_client(
    data_dir: Path, executor: ContractExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    options = ServeOptions(port=8798, database_url=f"sqlite:///{data_dir / 'replies.db'}")
    app = build_agent_app(CONTRACT, executor, options, service_name="rich")
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
        yield client


@pytest.fixture
async def plain_agent(data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    """An executor as every agent has it by default: its task opens at once."""
    async for client in _app_client(data_dir, RichExecutor(CONTRACT)):
        yield client


@pytest.fixture
async def deciding(data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    """An executor with ``may_reply``: a first turn may be answered with a Message."""
    async for client in _app_client(data_dir, DecidingExecutor(CONTRACT)):
        yield client


def _params(mode: str, skill: str = "chat") -> dict[str, Any]:
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": {"mode": mode}}],
        "metadata": {SKILL_META_KEY: skill},
    }
    return {"message": message}


async def _send(http: httpx.AsyncClient, mode: str, skill: str = "chat") -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": _params(mode, skill)}
    answer: dict[str, Any] = (await http.post("/", json=body)).json()
    assert "error" not in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


async def _stream(http: httpx.AsyncClient, mode: str) -> list[dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": _params(mode)}
    r = await http.post("/", json=body)
    lines = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:")]
    return [json.loads(line)["result"] for line in lines]


async def _tasks(http: httpx.AsyncClient) -> list[Any]:
    body = {"jsonrpc": "2.0", "id": 3, "method": "ListTasks", "params": {}}
    listed: list[Any] = (await http.post("/", json=body)).json()["result"].get("tasks", [])
    return listed


# -- artifacts: the task carries what the agent gave ----------------------------------------


async def test_a_text_only_answer_carries_no_empty_result_in_front(
    plain_agent: httpx.AsyncClient,
) -> None:
    task = (await _send(plain_agent, "text"))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [a["name"] for a in task["artifacts"]] == ["answer"]
    assert task["artifacts"][0]["parts"] == [{"text": "plain words", "mediaType": "text/plain"}]
    view = view_of_task(ParseDict(task, Task(), ignore_unknown_fields=True))
    assert view.data is None
    assert view.artifact_text("answer") == "plain words"


async def test_structured_data_still_goes_out_as_the_result_artifact(
    plain_agent: httpx.AsyncClient,
) -> None:
    task = (await _send(plain_agent, "data"))["task"]
    assert [a["name"] for a in task["artifacts"]] == [RESULT_ARTIFACT_NAME, "answer"]
    assert task["artifacts"][0]["parts"][0]["data"] == {"ok": True}


# -- message replies: the agent decides on the turn -----------------------------------------


async def test_without_may_reply_a_task_skill_still_cannot_answer_with_a_message(
    plain_agent: httpx.AsyncClient,
) -> None:
    task = (await _send(plain_agent, "reply"))["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    view = view_of_task(ParseDict(task, Task(), ignore_unknown_fields=True))
    assert view.error is not None
    assert view.error.code is ErrorCode.CONTRACT_VIOLATION


async def test_an_agent_answers_a_task_skill_with_a_message_and_opens_no_task(
    deciding: httpx.AsyncClient,
) -> None:
    result = await _send(deciding, "reply")
    assert list(result) == ["message"]
    assert result["message"]["role"] == "ROLE_AGENT"
    assert result["message"]["parts"][0]["text"] == "hello C-01"
    assert result["message"]["parts"][1]["data"] == {"ok": True}
    assert await _tasks(deciding) == []
    events = await _stream(deciding, "reply")
    assert [list(e) for e in events] == [["message"]]


async def test_the_same_agent_answers_other_turns_with_tasks(
    deciding: httpx.AsyncClient,
) -> None:
    text = (await _send(deciding, "text"))["task"]
    assert (text["status"]["state"], [a["name"] for a in text["artifacts"]]) == (
        "TASK_STATE_COMPLETED",
        ["answer"],
    )
    data = (await _send(deciding, "data"))["task"]
    assert [a["name"] for a in data["artifacts"]] == [RESULT_ARTIFACT_NAME, "answer"]
    declined = (await _send(deciding, "decline"))["task"]
    assert declined["status"]["state"] == "TASK_STATE_REJECTED"
    # Streamed, the task opens as always: the Task, then WORKING, then the end.
    events = await _stream(deciding, "data")
    assert "task" in events[0]
    states = [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    # A skill of the agent's other kinds is unchanged.
    assert (await _send(deciding, "artifacts", skill="say"))["task"]["artifacts"]


async def test_a_turn_that_reported_progress_has_its_task_and_cannot_become_a_message(
    deciding: httpx.AsyncClient,
) -> None:
    events = await _stream(deciding, "progress_then_reply")
    assert "task" in events[0]
    last = events[-1]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED"
    assert "progress" in last["message"]["parts"][0]["text"]


async def test_a_streamed_chunk_opens_the_task_and_a_refused_turn_still_fails(
    deciding: httpx.AsyncClient,
) -> None:
    events = await _stream(deciding, "stream")
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    chunks = [e["artifactUpdate"]["artifact"]["name"] for e in events if "artifactUpdate" in e]
    assert chunks == ["story"]  # no data: no `result` after it either
    refused = (await _send(deciding, "no-such-mode"))["task"]
    assert refused["status"]["state"] == "TASK_STATE_FAILED"
    view = view_of_task(ParseDict(refused, Task(), ignore_unknown_fields=True))
    assert view.error is not None
    assert view.error.code is ErrorCode.INVALID_INPUT


async def test_the_python_client_gets_the_message(deciding: httpx.AsyncClient) -> None:
    token = mint_token("C-01", ["customer"])
    for transport in ("jsonrpc", "rest"):
        agent = await A2AClient.connect(BASE, token=token, transport=transport, http=deciding)
        for streaming in (True, False):
            view = await agent.send(data={"mode": "reply"}, skill="chat", streaming=streaming)
            assert (view.task_id, view.status) == ("", Status.COMPLETED)
            assert view.data == {"ok": True}
            assert view.text.startswith("hello C-01")


# -- Accord's clients find `result` by its name, not its place ------------------------------


def test_the_client_reads_result_when_it_is_not_the_first_artifact() -> None:
    task = Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
        artifacts=[
            Artifact(artifact_id="a", name="summary", parts=[Part(text="words first")]),
            Artifact(artifact_id="b", name="other", parts=[data_part({"other": 1})]),
            Artifact(artifact_id="c", name=RESULT_ARTIFACT_NAME, parts=[data_part({"ok": 1})]),
        ],
    )
    assert view_of_task(task).data == {"ok": 1}
    # The streamed form folds to the same view.
    assert TaskTracker().apply(StreamResponse(task=task)).data == {"ok": 1}
