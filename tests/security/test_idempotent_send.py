"""A request is once: ``(principal, messageId)`` names it, and a resend returns what it made.

Found against a running mesh (issue #30, finding 1): customer C-01 sending "please refund $10
of order O-1001" twice with the same A2A ``messageId`` (JSON-RPC, HTTP+JSON, or a streamed send
whose connection dropped after the first event) got two (three) tasks and two refunds. Now
(docs/a2a-server.md, "Idempotent send"): the copy is answered with the task the first made, in
its current state, over either binding, blocking or streaming, after a restart of the agent,
and through two replicas on PostgreSQL at once; the same messageId with other parts is
IDEMPOTENCY_CONFLICT; the A2A client re-sends a send whose fate it cannot know with the same
messageId and follows the task. Real processes: the five services of one mesh (and two
orchestrator replicas on PostgreSQL).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import IDEMPOTENT_SEND_EXTENSION_URI, SKILL_META_KEY, TRACEPARENT_KEY
from accord.contracts.status import TERMINAL, Status
from accord.protocol.a2a.client import A2AClient, new_traceparent
from tests.mesh.mesh_support import Mesh, mesh_for_module
from tests.mesh.replica_support import Replicas, running_replicas
from tests.mesh.support import get_task, token
from tests.support import postgres

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(300)

ASK: Final = "please refund $10 of order O-1001, I changed my mind"
ORDER: Final = "O-1001"
STOPPED: Final = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_INPUT_REQUIRED")


def _headers(subject: str = "C-01") -> dict[str, str]:
    return {"A2A-Version": "1.0", "Authorization": f"Bearer {token(subject)}"}


def _message(message_id: str, text: str = ASK) -> dict[str, Any]:
    """A customer's message; every copy gets a fresh traceparent, as a retrying client's."""
    return {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": {SKILL_META_KEY: "refund.request", TRACEPARENT_KEY: new_traceparent()},
    }


def _rpc(method: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": uuid.uuid4().hex,
        "method": method,
        "params": {"message": message, "configuration": {"historyLength": 0}},
    }


async def _send_rpc(url: str, message: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=120) as http:
        answer = await http.post(url + "/", json=_rpc("SendMessage", message), headers=_headers())
    body: dict[str, Any] = answer.json()
    return body


async def _send_rest(url: str, message: dict[str, Any]) -> httpx.Response:
    body = {"message": message, "configuration": {"historyLength": 0}}
    async with httpx.AsyncClient(timeout=120) as http:
        return await http.post(url + "/message:send", json=body, headers=_headers())


async def _stream_rpc(url: str, message: dict[str, Any], *, events: int | None = None) -> list[Any]:
    """The stream's events; with ``events``, the connection is dropped after that many."""
    seen: list[Any] = []
    body = _rpc("SendStreamingMessage", message)
    headers = {**_headers(), "Accept": "text/event-stream"}
    async with (
        httpx.AsyncClient(timeout=120) as http,
        http.stream("POST", url + "/", json=body, headers=headers) as answer,
    ):
        async for line in answer.aiter_lines():
            if line.startswith("data:"):
                seen.append(json.loads(line[5:])["result"])
                if events is not None and len(seen) >= events:
                    break  # leaving the block closes the connection mid-stream
    return seen


def _task_id(event: dict[str, Any]) -> str:
    if "task" in event:
        return str(event["task"]["id"])
    update = event.get("statusUpdate") or event.get("artifactUpdate") or {}
    return str(update["taskId"])


async def _task_count(url: str, subject: str = "C-01") -> int:
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(url + "/tasks", params={"pageSize": 1}, headers=_headers(subject))
    return int(answer.json().get("totalSize", 0))


def _refunds_of(mesh: Mesh, task_id: str) -> int:
    """Ledger rows whose business key names this task (refund:<order>:<task>)."""
    return sum(1 for key in mesh.refund_keys() if key.endswith(f":{task_id}"))


async def _settled(mesh: Mesh, task_id: str) -> Status:
    """The task's status once it stopped for the customer (its refund, if any, is written)."""
    for _ in range(600):
        view = await get_task(mesh, "C-01", task_id)
        if view.status in TERMINAL or view.status is Status.WAITING:
            return view.status
        await asyncio.sleep(0.1)  # polling the agent, bounded by the loop
    raise TimeoutError(f"task {task_id} never stopped")


async def _one_task_one_refund(mesh: Mesh, task_id: str, tasks_before: int) -> None:
    assert await _task_count(mesh.orchestrator) == tasks_before + 1
    status = await _settled(mesh, task_id)
    # A refund request pays once, or (a customer who had a few refunds) waits for an approver.
    assert _refunds_of(mesh, task_id) == (1 if status is Status.COMPLETED else 0), status
    assert status in (Status.COMPLETED, Status.WAITING)


def test_the_card_declares_idempotent_send(mesh_for_module: Mesh) -> None:
    for service in ("orchestrator", "policy", "risk"):
        card = httpx.get(mesh_for_module.url(service) + "/.well-known/agent-card.json").json()
        uris = [e["uri"] for e in card["capabilities"]["extensions"]]
        assert IDEMPOTENT_SEND_EXTENSION_URI in uris, service


async def test_a_jsonrpc_resend_returns_the_first_task(mesh_for_module: Mesh) -> None:
    mesh = mesh_for_module
    before = await _task_count(mesh.orchestrator)
    message_id = uuid.uuid4().hex
    first = await _send_rpc(mesh.orchestrator, _message(message_id))
    again = await _send_rpc(mesh.orchestrator, _message(message_id))
    task_id = first["result"]["task"]["id"]
    assert again["result"]["task"]["id"] == task_id
    assert again["result"]["task"]["status"]["state"] == first["result"]["task"]["status"]["state"]
    await _one_task_one_refund(mesh, task_id, before)


async def test_an_approval_sent_again_gets_its_first_answer(mesh_for_module: Mesh) -> None:
    """The orchestrator refuses an approval of a refund that waits for none before any task
    exists (ContractExecutor.admit_task); a copy of an approval that was made is no such
    refusal: it gets the task the first made back, though the refund waits no more."""
    url = mesh_for_module.orchestrator
    async with await A2AClient.connect(url, token=token("C-04")) as client:
        waiting = await client.send(text="refund order O-1006 please, I changed my mind")
    assert waiting.status is Status.WAITING, waiting

    def approval(message_id: str) -> dict[str, Any]:
        return {
            "messageId": message_id,
            "role": "ROLE_USER",
            "parts": [{"data": {"task_id": waiting.task_id, "decision": "approve"}}],
            "metadata": {SKILL_META_KEY: "refund.approve"},
        }

    async def send(message: dict[str, Any]) -> dict[str, Any]:
        headers = {**_headers(), "Authorization": f"Bearer {token('approver-1', 'approver')}"}
        async with httpx.AsyncClient(timeout=120) as http:
            answer = await http.post(url + "/", json=_rpc("SendMessage", message), headers=headers)
        body: dict[str, Any] = answer.json()
        return body

    first_id = uuid.uuid4().hex
    first = await send(approval(first_id))
    made = first["result"]["task"]
    assert made["status"]["state"] == "TASK_STATE_COMPLETED", first
    again = await send(approval(first_id))
    assert again["result"]["task"]["id"] == made["id"], again
    before = await _task_count(url, "approver-1")  # the approver's own tasks
    other = await send(approval(uuid.uuid4().hex))  # a new approval: refused, and no task
    assert "result" not in other, other
    assert AccordError.from_jsonrpc_error(other["error"]).code is ErrorCode.INVALID_INPUT
    assert await _task_count(url, "approver-1") == before


async def test_a_rest_resend_returns_the_first_task(mesh_for_module: Mesh) -> None:
    mesh = mesh_for_module
    before = await _task_count(mesh.orchestrator)
    message_id = uuid.uuid4().hex
    first, again = await asyncio.gather(
        _send_rest(mesh.orchestrator, _message(message_id)),
        _send_rest(mesh.orchestrator, _message(message_id)),
    )
    assert first.status_code == again.status_code == 200, (first.text, again.text)
    task_id = first.json()["task"]["id"]
    assert again.json()["task"]["id"] == task_id
    await _one_task_one_refund(mesh, task_id, before)


async def test_a_stream_dropped_after_its_first_event_then_resent(mesh_for_module: Mesh) -> None:
    mesh = mesh_for_module
    before = await _task_count(mesh.orchestrator)
    message_id = uuid.uuid4().hex
    dropped = await _stream_rpc(mesh.orchestrator, _message(message_id), events=1)
    task_id = _task_id(dropped[0])
    resent = await _stream_rpc(mesh.orchestrator, _message(message_id))
    assert {_task_id(e) for e in resent} == {task_id}
    assert "task" in resent[0]  # the copy is answered with the task as it stands, then followed
    last = resent[-1].get("task") or resent[-1].get("statusUpdate")
    assert last["status"]["state"] in STOPPED, resent[-1]
    # And once more over HTTP+JSON, blocking: the same task.
    rest = await _send_rest(mesh.orchestrator, _message(message_id))
    assert rest.json()["task"]["id"] == task_id
    await _one_task_one_refund(mesh, task_id, before)


async def test_other_parts_under_the_same_message_id_are_a_conflict(mesh_for_module: Mesh) -> None:
    mesh = mesh_for_module
    message_id = uuid.uuid4().hex
    first = await _send_rpc(mesh.orchestrator, _message(message_id, "refund order O-1002"))
    before = await _task_count(mesh.orchestrator)
    other = _message(message_id, "refund order O-1002, it does not fit")
    rpc = await _send_rpc(mesh.orchestrator, other)
    assert AccordError.from_jsonrpc_error(rpc["error"]).code is ErrorCode.IDEMPOTENCY_CONFLICT
    rest = await _send_rest(mesh.orchestrator, other)
    assert rest.status_code == 409, rest.text
    assert AccordError.from_rest(409, rest.json()).code is ErrorCode.IDEMPOTENCY_CONFLICT
    assert await _task_count(mesh.orchestrator) == before  # nothing new was made
    # The same message is still the same request.
    again = await _send_rpc(mesh.orchestrator, _message(message_id, "refund order O-1002"))
    assert again["result"]["task"]["id"] == first["result"]["task"]["id"]


async def test_a_resend_after_a_restart_returns_the_first_task(mesh_for_module: Mesh) -> None:
    mesh = mesh_for_module
    before = await _task_count(mesh.orchestrator)
    message_id = uuid.uuid4().hex
    first = await _send_rpc(mesh.orchestrator, _message(message_id))
    task_id = first["result"]["task"]["id"]
    await asyncio.to_thread(mesh.restart_orchestrator)  # SIGKILL, then a new process
    again = await _send_rpc(mesh.orchestrator, _message(message_id))
    assert again["result"]["task"]["id"] == task_id
    await _one_task_one_refund(mesh, task_id, before)


class _DropsTheFirstAnswer(httpx.AsyncBaseTransport):
    """The network loses the answer to the first send: the agent got it and acts on it, the
    caller sees the connection drop before any byte of the answer."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.dropped = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if self.dropped == 0 and request.method == "POST" and b"Message" in request.content:
            self.dropped += 1
            await response.aclose()
            raise httpx.ReadError("connection reset by peer", request=request)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "blocking"])
async def test_the_client_resends_a_send_whose_answer_was_lost(
    mesh_for_module: Mesh, streaming: bool
) -> None:
    mesh = mesh_for_module
    before = await _task_count(mesh.orchestrator)
    transport = _DropsTheFirstAnswer()
    async with (
        httpx.AsyncClient(transport=transport, timeout=120) as http,
        await A2AClient.connect(mesh.orchestrator, token=token("C-01"), http=http) as client,
    ):
        view = await client.send(text=ASK, skill="refund.request", streaming=streaming)
    assert transport.dropped == 1
    assert view.status in (Status.COMPLETED, Status.WAITING), view.error
    await _one_task_one_refund(mesh, view.task_id, before)


# -- two replicas on PostgreSQL ---------------------------------------------------------------


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str
) -> Iterator[Replicas]:
    with running_replicas(
        tmp_path_factory.mktemp("idempotent-replicas"),
        postgres.fresh_database(postgres_server_url),
        {},
        {},
    ) as started:
        yield started


async def test_concurrent_copies_through_two_replicas_make_one_task(replicas: Replicas) -> None:
    message_id = uuid.uuid4().hex
    a, b = replicas.via("a").orchestrator, replicas.via("b").orchestrator
    copies = await asyncio.gather(
        *(_send_rpc(url, _message(message_id)) for url in (a, b, a, b)),
        *(_send_rest(url, _message(message_id)) for url in (b, a)),
    )
    ids = {c["result"]["task"]["id"] for c in copies[:4]} | {
        c.json()["task"]["id"] for c in copies[4:]
    }
    assert len(ids) == 1, copies
    task_id = ids.pop()
    status = await _settled(replicas.via("b"), task_id)
    assert status is Status.COMPLETED, status
    assert await replicas.refund_rows(ORDER) == 1
    assert await _task_count(a) == await _task_count(b) == 1
