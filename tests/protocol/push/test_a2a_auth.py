"""A2A 1.0.1's push authentication (issue #32): a config's ``token`` is optional, its
``authentication`` is sent as ``Authorization``, and Accord's signature is added only when a
token long enough to key it was given."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a.types import Task, TaskPushNotificationConfig, TaskState, TaskStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.contracts.keys import PUSH_ID_HEADER, PUSH_SIGNATURE_HEADER, PUSH_TOKEN_HEADER
from accord.protocol.push.delivery import PushNotifications
from accord.protocol.push.owners import owner_context
from accord.protocol.push.signing import verify
from tests.protocol.push.store_support import make_store
from tests.support.processes import free_port
from tests.support.push_receiver import TOKEN, serving


async def _no_reader(task_id: str, owner: str) -> Task | None:
    del task_id, owner
    return None  # these tests hand events to the sender directly


def _completed() -> Task:
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    task.status.timestamp.FromSeconds(1_700_000_000)
    return task


@contextlib.asynccontextmanager
async def capturing() -> AsyncIterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    """A receiver that answers 204 and keeps each request's headers and body."""
    got: list[tuple[dict[str, str], bytes]] = []

    async def capture(request: Request) -> Response:
        got.append((dict(request.headers), await request.body()))
        return Response(status_code=204)

    port = free_port()
    async with serving(Starlette(routes=[Route("/hook", capture, methods=["POST"])]), port):
        yield f"http://127.0.0.1:{port}/hook", got


async def _deliver_once(
    tmp_path: Path, config: TaskPushNotificationConfig
) -> tuple[dict[str, str], bytes]:
    async with capturing() as (url, got):
        config.url = url
        store = make_store(tmp_path)
        await store.set_info("t-1", config, owner_context("accord/C-01"))
        push = PushNotifications(store, _no_reader)
        await push.send_notification("t-1", _completed())
        async with asyncio.timeout(20):
            await push.deliver_due()
        assert push.delivered == 1
        assert await store.next_due() is None
        await store.close()
    assert len(got) == 1
    return got[0]


async def test_a_config_without_a_token_is_accepted_and_delivered(tmp_path: Path) -> None:
    headers, body = await _deliver_once(tmp_path, TaskPushNotificationConfig(id="cfg"))
    assert b"TASK_STATE_COMPLETED" in body
    assert PUSH_ID_HEADER.lower() in headers
    # Nothing of ours signs without a token, and no empty token header is sent.
    assert PUSH_SIGNATURE_HEADER.lower() not in headers
    assert PUSH_TOKEN_HEADER.lower() not in headers
    assert "authorization" not in headers


async def test_authentication_is_sent_as_authorization(tmp_path: Path) -> None:
    config = TaskPushNotificationConfig(id="cfg")
    config.authentication.scheme = "Bearer"
    config.authentication.credentials = "receiver-issued-credential"
    headers, _ = await _deliver_once(tmp_path, config)
    assert headers["authorization"] == "Bearer receiver-issued-credential"
    assert PUSH_SIGNATURE_HEADER.lower() not in headers


@pytest.mark.parametrize("token", ["short", "fifteen-chars!!"])
async def test_a_short_token_is_accepted_and_sent_but_signs_nothing(
    tmp_path: Path, token: str
) -> None:
    headers, _ = await _deliver_once(tmp_path, TaskPushNotificationConfig(id="cfg", token=token))
    assert headers[PUSH_TOKEN_HEADER.lower()] == token
    assert PUSH_SIGNATURE_HEADER.lower() not in headers


async def test_a_long_token_adds_accords_signature_beside_authorization(tmp_path: Path) -> None:
    config = TaskPushNotificationConfig(id="cfg", token=TOKEN)
    config.authentication.scheme = "Basic"
    config.authentication.credentials = "dXNlcjpwYXNz"
    headers, body = await _deliver_once(tmp_path, config)
    assert headers["authorization"] == "Basic dXNlcjpwYXNz"
    assert headers[PUSH_TOKEN_HEADER.lower()] == TOKEN
    signature = headers[PUSH_SIGNATURE_HEADER.lower()]
    assert verify(TOKEN, headers[PUSH_ID_HEADER.lower()], body, signature)
