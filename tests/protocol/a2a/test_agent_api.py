"""The agent API through the real A2A app (build_agent_app over httpx's ASGI transport, a
SQLite task store): several artifacts of text, file and data parts; an artifact streamed in
chunks (append, lastChunk); a decline that ends REJECTED; a direct Message reply without a
task; the message id and parts the handler sees. tests/protocol/a2a/rich_agent.py is the agent.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.types import Task
from google.protobuf.json_format import ParseDict

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import SKILL_META_KEY, STATUS_META_KEY
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient
from accord.protocol.a2a.client.view import TaskView, view_of_task
from accord.protocol.a2a.server import build_agent_app
from accord.protocol.auth import mint_token
from accord.protocol.settings import ServeOptions
from tests.protocol.a2a.rich_agent import CONTRACT, PNG, RECEIPT_URL, RichExecutor

HEADERS = {"A2A-Version": "1.0"}


@pytest.fixture
async def http(data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    options = ServeOptions(port=8798, database_url=f"sqlite:///{data_dir / 'rich.db'}")
    app = build_agent_app(CONTRACT, RichExecutor(CONTRACT), options, service_name="rich")
    token = mint_token("C-01", ["customer"])
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://127.0.0.1:8798",
            headers={**HEADERS, "Authorization": f"Bearer {token}"},
            timeout=30.0,
        ) as client,
    ):
        yield client


def view_from_task(task: dict[str, Any]) -> TaskView:
    """What the Accord Python client reads of the wire JSON of a task."""
    return view_of_task(ParseDict(task, Task(), ignore_unknown_fields=True))


def _message(skill: str, data: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": data}],
        "metadata": {SKILL_META_KEY: skill},
        **extra,
    }


async def _rpc(http: httpx.AsyncClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    r = await http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    body: dict[str, Any] = r.json()
    assert "error" not in body, body
    result: dict[str, Any] = body["result"]
    return result


async def _send(http: httpx.AsyncClient, skill: str, data: dict[str, Any]) -> dict[str, Any]:
    return await _rpc(http, "SendMessage", {"message": _message(skill, data)})


async def _stream(http: httpx.AsyncClient, skill: str, data: dict[str, Any]) -> list[Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "SendStreamingMessage",
        "params": {"message": _message(skill, data)},
    }
    r = await http.post("/", json=body)
    lines = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:")]
    return [json.loads(line)["result"] for line in lines]


async def test_a_completed_task_carries_the_result_and_every_further_artifact(
    http: httpx.AsyncClient,
) -> None:
    task = (await _send(http, "say", {"mode": "artifacts"}))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    by_name = {a["name"]: a for a in task["artifacts"]}
    assert list(by_name) == ["result", "receipt", "files", "more-data"]
    assert by_name["result"]["parts"][0]["data"] == {"ok": True}
    assert by_name["receipt"]["parts"] == [
        {"text": "Receipt R-1: 12.00 EUR", "mediaType": "text/plain"}
    ]
    raw, url = by_name["files"]["parts"]
    assert base64.b64decode(raw["raw"]) == PNG
    assert (raw["mediaType"], raw["filename"]) == ("image/png", "photo.png")
    assert (url["url"], url["mediaType"]) == (RECEIPT_URL, "application/pdf")
    assert by_name["more-data"]["parts"][0]["data"] == {"n": 3}
    # The Accord client still reads the result artifact as the task's data.
    view = view_from_task(task)
    assert view.status is Status.COMPLETED
    assert view.data == {"ok": True}


async def test_an_artifact_streams_in_chunks_and_reads_back_whole(
    http: httpx.AsyncClient,
) -> None:
    events = await _stream(http, "say", {"mode": "stream"})
    chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    story = [c for c in chunks if c["artifact"]["name"] == "story"]
    assert [c["artifact"]["parts"][0]["text"] for c in story] == ["once ", "upon ", "a time"]
    assert [c.get("append", False) for c in story] == [False, True, True]
    assert [c.get("lastChunk", False) for c in story] == [False, False, True]
    task_id = story[0]["taskId"]
    task = await _rpc(http, "GetTask", {"id": task_id})
    stored = {a["name"]: a for a in task["artifacts"]}
    assert "".join(p["text"] for p in stored["story"]["parts"]) == "once upon a time"
    assert stored["result"]["parts"][0]["data"] == {"ok": True}


async def test_a_declined_request_ends_a2a_rejected_and_reads_failed_declined_with_its_code(
    http: httpx.AsyncClient,
) -> None:
    task = (await _send(http, "say", {"mode": "decline"}))["task"]
    assert task["status"]["state"] == "TASK_STATE_REJECTED"
    meta = task["status"]["message"]["metadata"][STATUS_META_KEY]
    assert meta["status"] == "failed"  # five statuses (contract 2.0): a decline is a failure
    assert meta["error"]["code"] == "UNSUPPORTED_OPERATION"
    view = view_from_task(task)
    assert (view.status, view.declined) == (Status.FAILED, True)
    assert view.state.error_code is ErrorCode.UNSUPPORTED_OPERATION
    assert view.to_dict()["declined"] is True
    assert view.is_terminal
    assert view.error is not None
    assert view.error.code is ErrorCode.UNSUPPORTED_OPERATION
    assert view.error.details == {"asked": "decline"}
    # Terminal: a further message to it is refused.
    again = _message("say", {"mode": "decline"}, taskId=task["id"])
    r = await http.post(
        "/", json={"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": again}}
    )
    assert "error" in r.json()


async def test_a_decline_with_a_retryable_code_is_a_contract_violation(
    http: httpx.AsyncClient,
) -> None:
    task = (await _send(http, "say", {"mode": "decline_retryable"}))["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    view = view_from_task(task)
    assert view.error is not None
    assert view.error.code is ErrorCode.CONTRACT_VIOLATION


async def test_a_message_skill_replies_with_a_message_and_no_task(
    http: httpx.AsyncClient,
) -> None:
    result = await _send(http, "quick", {"mode": "reply"})
    assert "task" not in result
    reply = result["message"]
    assert reply["role"] == "ROLE_AGENT"
    assert reply["parts"][0]["text"] == "at once"
    assert reply["parts"][1]["data"] == {"ok": True}
    assert reply["parts"][2]["text"] == "P.S."
    listed = await _rpc(http, "ListTasks", {})
    assert listed.get("tasks", []) == []


@pytest.mark.parametrize(
    ("path", "wrap"),
    [("/", True), ("/message:stream", False)],
    ids=["jsonrpc", "rest"],
)
async def test_a_message_only_stream_holds_one_message_then_closes(
    http: httpx.AsyncClient, path: str, wrap: bool
) -> None:
    """A2A 1.0 3.1.2: a stream answered with a Message (a ``reply: message`` skill) holds
    exactly that one Message and no task event, then the server closes it."""
    params = {"message": _message("quick", {"mode": "reply"})}
    body = {"jsonrpc": "2.0", "id": 4, "method": "SendStreamingMessage", "params": params}
    # The ASGI transport returns once the app has finished the response: that is the close.
    r = await asyncio.wait_for(http.post(path, json=body if wrap else params), timeout=20.0)
    assert r.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith("data:")]
    results = [e["result"] for e in events] if wrap else events
    assert len(results) == 1, results
    (only,) = results
    assert list(only) == ["message"]
    assert only["message"]["role"] == "ROLE_AGENT"
    assert only["message"]["parts"][0]["text"] == "at once"
    assert "taskId" not in only["message"]


async def test_a_message_skill_that_declines_opens_a_rejected_task(
    http: httpx.AsyncClient,
) -> None:
    task = (await _send(http, "quick", {"mode": "decline"}))["task"]
    assert task["status"]["state"] == "TASK_STATE_REJECTED"
    fetched = await _rpc(http, "GetTask", {"id": task["id"]})
    assert fetched["status"]["state"] == "TASK_STATE_REJECTED"


async def test_a_task_skill_cannot_reply_with_a_message(http: httpx.AsyncClient) -> None:
    task = (await _send(http, "say", {"mode": "reply_from_task"}))["task"]
    view = view_from_task(task)
    assert view.error is not None
    assert view.error.code is ErrorCode.CONTRACT_VIOLATION


async def test_the_handler_sees_the_message_id_and_every_part(http: httpx.AsyncClient) -> None:
    message = _message("say", {"mode": "parts"})
    message["parts"] += [
        {"text": "hello"},
        {"url": "https://example.com/a.pdf", "mediaType": "application/pdf", "filename": "a.pdf"},
    ]
    task = (await _rpc(http, "SendMessage", {"message": message}))["task"]
    data = task["artifacts"][0]["parts"][0]["data"]
    assert data["message_id"] == message["messageId"]
    assert data["parts"][1:] == [
        {"text": "hello"},
        {"url": "https://example.com/a.pdf", "mediaType": "application/pdf", "filename": "a.pdf"},
    ]


@pytest.mark.parametrize("transport", ["jsonrpc", "rest"])
async def test_the_python_client_reads_all_of_it(http: httpx.AsyncClient, transport: str) -> None:
    """Accord's own client, streaming (chunks folded by append) and not, on both transports."""
    token = mint_token("C-01", ["customer"])
    agent = await A2AClient.connect(
        "http://127.0.0.1:8798", token=token, transport=transport, http=http
    )
    streamed = await agent.send(data={"mode": "stream"}, skill="say", streaming=True)
    assert streamed.status is Status.COMPLETED
    assert streamed.data == {"ok": True}
    assert streamed.artifact_text("story") == "once upon a time"
    full = await agent.send(data={"mode": "artifacts"}, skill="say", streaming=False)
    assert full.data == {"ok": True}
    assert full.artifact_text("receipt") == "Receipt R-1: 12.00 EUR"
    declined = await agent.send(data={"mode": "decline"}, skill="say")
    assert (declined.status, declined.declined) == (Status.FAILED, True)
    assert declined.is_terminal
    assert declined.error is not None
    assert declined.error.code is ErrorCode.UNSUPPORTED_OPERATION
    quick = await agent.send(data={"mode": "reply"}, skill="quick")
    assert quick.status is Status.COMPLETED
    assert quick.data == {"ok": True}
    assert quick.text.startswith("at once")
