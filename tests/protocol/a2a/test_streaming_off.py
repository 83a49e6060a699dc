"""A2A 1.0 3.3.4 for an agent whose contract says ``streaming: false``, through the real A2A
app (build_agent_app over httpx's ASGI transport, a SQLite task store): the card says so, and
both streaming methods (a streaming send, a subscription) are UnsupportedOperationError on both
bindings, the contract's UNSUPPORTED_OPERATION; a plain send still works."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from accord.contracts.agents import AgentContract
from accord.contracts.errors import REGISTRY, AccordError, ErrorCode
from accord.protocol.a2a.server import build_agent_app
from accord.protocol.auth import mint_token
from accord.protocol.settings import ServeOptions
from tests.protocol.a2a import agent_app
from tests.protocol.a2a.wire_client import auth, message

# The test agent (agent_app.py), its contract saying it does not stream.
QUIET = AgentContract.model_validate(
    {**agent_app.CONTRACT.model_dump(mode="json"), "streaming": False}
)
UNSUPPORTED = REGISTRY[ErrorCode.UNSUPPORTED_OPERATION]  # A2A's UnsupportedOperationError
URL = f"http://127.0.0.1:{QUIET.default_port}"


@pytest.fixture
async def http(data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    options = ServeOptions(
        port=QUIET.default_port, database_url=f"sqlite:///{data_dir / 'quiet.db'}"
    )
    app = build_agent_app(QUIET, agent_app.TestExecutor(QUIET), options, service_name="quiet")
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url=URL,
            headers=auth(mint_token("C-01", ["customer"])),
            timeout=20.0,
        ) as client,
    ):
        yield client


def _error_of(r: httpx.Response, rpc: bool) -> tuple[AccordError, dict[str, Any]]:
    """The refusal (and its wire body), whether the server answered with a JSON body or a
    stream of one error."""
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        events = [json.loads(x[5:]) for x in r.text.splitlines() if x.startswith("data:")]
        assert len(events) == 1, events
        body: Any = events[0]
    else:
        body = r.json()
    if rpc:
        assert "error" in body, body
        return AccordError.from_jsonrpc_error(body["error"]), body
    assert r.status_code >= 400, body
    return AccordError.from_rest(r.status_code, body), body


async def _rpc(http: httpx.AsyncClient, method: str, params: dict[str, Any]) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 5, "method": method, "params": params}
    return await asyncio.wait_for(http.post("/", json=body), timeout=20.0)


async def test_the_card_says_the_agent_does_not_stream(http: httpx.AsyncClient) -> None:
    card = (await http.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"].get("streaming", False) is False


@pytest.mark.parametrize("transport", ["jsonrpc", "rest"])
async def test_streaming_methods_of_an_agent_that_does_not_stream_are_unsupported(
    http: httpx.AsyncClient, transport: str
) -> None:
    """3.3.4: SendStreamingMessage and SubscribeToTask are UnsupportedOperationError. The
    subscription asks for a waiting task, which a streaming agent would serve (test_spec_
    operations.py::test_a_subscription_starts_with_the_task_and_a_finished_task_refuses_one),
    so the refusal is for the missing capability, not for the task's state."""
    rpc = transport == "jsonrpc"
    sent = await _rpc(http, "SendMessage", {"message": message({"mode": "ask"})})
    waiting = sent.json()["result"]["task"]
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    params = {"message": message({"mode": "complete", "n": 1})}
    if rpc:
        streamed = await _rpc(http, "SendStreamingMessage", params)
        subscribed = await _rpc(http, "SubscribeToTask", {"id": waiting["id"]})
    else:
        streamed = await asyncio.wait_for(http.post("/message:stream", json=params), 20.0)
        subscribed = await asyncio.wait_for(http.get(f"/tasks/{waiting['id']}:subscribe"), 20.0)
    for answer in (streamed, subscribed):
        error, body = _error_of(answer, rpc)
        assert error.code is ErrorCode.UNSUPPORTED_OPERATION, body
        if rpc:
            assert body["error"]["code"] == UNSUPPORTED.jsonrpc_code
        else:
            assert answer.status_code == UNSUPPORTED.rest_status
    # A plain send is still served, and the refused streaming send started no task.
    done = await _rpc(http, "SendMessage", params)
    assert done.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    listed = (await _rpc(http, "ListTasks", {})).json()["result"]["tasks"]
    assert sorted(t["status"]["state"] for t in listed) == [
        "TASK_STATE_COMPLETED",
        "TASK_STATE_INPUT_REQUIRED",
    ]
