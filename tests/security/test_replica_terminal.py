"""A message to a task another replica ended is refused as a message to a terminal task.

Found with two orchestrator replicas on PostgreSQL (issue #30): a task waiting on A, canceled
through B, then a message to A: A answered HTTP 500 / INTERNAL (its log:
``CONTRACT_VIOLATION: illegal status transition failed -> running``), because A's copy of the
task still said "waiting". The workflow log is the one truth of a task: A reads the task's
state from it and answers UNSUPPORTED_OPERATION (the registry's code for a message to a
terminal task), on both bindings, blocking and streaming, and the task stays canceled.
Real processes: the five services and a second orchestrator replica on one PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient
from tests.mesh.replica_support import Replicas, running_replicas
from tests.mesh.support import ask, get_task, token
from tests.support import postgres

pytestmark = pytest.mark.timeout(300)

HEADERS: Final = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str
) -> Iterator[Replicas]:
    with running_replicas(
        tmp_path_factory.mktemp("replica-terminal"),
        postgres.fresh_database(postgres_server_url),
        {},
        {},
    ) as started:
        yield started


def _message(task_id: str, message_id: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "role": "ROLE_USER",
        "taskId": task_id,
        "parts": [{"text": "the handle snapped off, photo IMG_1.jpg"}],
    }


async def _rpc(
    url: str, method: str, task_id: str, message_id: str, subject: str = "C-01"
) -> httpx.Response:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"message": _message(task_id, message_id)},
    }
    headers = {**HEADERS, "Authorization": f"Bearer {token(subject)}"}
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(url + "/", json=call, headers=headers)


async def _rest(url: str, task_id: str, message_id: str) -> httpx.Response:
    headers = {**HEADERS, "Authorization": f"Bearer {token('C-01')}"}
    body = {"message": _message(task_id, message_id)}
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(url + "/message:send", json=body, headers=headers)


def _rpc_error(answer: httpx.Response) -> AccordError:
    """The error of a JSON-RPC answer, blocking (one JSON body) or streamed (SSE events)."""
    text = answer.text
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        assert events, text[:300]
        body = events[-1]
    else:
        body = answer.json()
    assert "error" in body, text[:500]
    return AccordError.from_jsonrpc_error(body["error"])


async def test_a_message_to_a_task_b_canceled_is_refused_on_a_never_a_500(
    replicas: Replicas,
) -> None:
    a, b = replicas.via("a"), replicas.via("b")
    view = await ask(a, "C-01", "my mug arrived broken, order O-1005")
    assert view.waiting_reason is WaitingReason.INPUT, view.error
    async with await A2AClient.connect(b.orchestrator, token=token("C-01")) as client:
        canceled = await client.cancel(view.task_id)
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED

    # The first message to A (where the task waited), then again, on every binding.
    for n, method in enumerate(("SendMessage", "SendStreamingMessage", "SendMessage")):
        answer = await _rpc(a.orchestrator, method, view.task_id, f"m-after-cancel-{n}")
        assert answer.status_code == 200, (method, answer.status_code, answer.text[:300])
        error = _rpc_error(answer)
        assert error.code is ErrorCode.UNSUPPORTED_OPERATION, (method, error)
    rest = await _rest(a.orchestrator, view.task_id, "m-after-cancel-rest")
    assert rest.status_code == 400, (rest.status_code, rest.text[:300])
    assert AccordError.from_rest(rest.status_code, rest.json()).code is (
        ErrorCode.UNSUPPORTED_OPERATION
    )

    for replica in (a, b):
        read = await get_task(replica, "C-01", view.task_id)
        assert read.status is Status.FAILED
        assert read.error is not None
        assert read.error.code is ErrorCode.CANCELED
    log = replicas.a.log()
    assert "illegal status transition" not in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert await replicas.refund_rows("O-1005") == 0
