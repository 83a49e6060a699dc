"""Delivery against real HTTP receivers on 127.0.0.1 (development policy): signed, retried
with backoff, redirects not followed, once per state change, kept across a restart."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskPushNotificationConfig, TaskState, TaskStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.protocol.push.delivery import PushNotifications
from accord.protocol.push.owners import owner_context
from accord.protocol.push.policy import pinned
from accord.protocol.push.secrets import PushSecrets
from accord.protocol.push.store import PushStore
from tests.protocol.push.store_support import DEV, KEY, make_store
from tests.support.processes import free_port
from tests.support.push_receiver import TOKEN, running_receiver, serving


def _task(state: TaskState, second: int) -> Task:
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=state))
    task.status.timestamp.FromSeconds(1_700_000_000 + second)
    return task


def _store(tmp_path: Path) -> PushStore:
    return make_store(tmp_path)


async def _reader(task_id: str, owner: str) -> Task | None:
    del task_id, owner
    return None  # these tests hand events to the sender directly


async def _configure(store: PushStore, url: str, owner: str = "accord/C-01") -> None:
    config = TaskPushNotificationConfig(task_id="t-1", id="cfg", url=url, token=TOKEN)
    await store.set_info("t-1", config, owner_context(owner))


@contextlib.asynccontextmanager
async def delivering(push: PushNotifications) -> AsyncIterator[None]:
    running = asyncio.create_task(push.run())
    try:
        yield
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await push.store.close()


async def test_each_state_change_is_pushed_once_signed(tmp_path: Path) -> None:
    async with running_receiver(free_port()) as receiver:
        store = _store(tmp_path)
        await _configure(store, receiver.url)
        push = PushNotifications(store, _reader)
        async with delivering(push):
            working = _task(TaskState.TASK_STATE_WORKING, 1)
            await push.send_notification("t-1", working)
            await push.send_notification("t-1", working)  # the same change seen twice
            await push.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 2))
            await receiver.wait_for("t-1", "TASK_STATE_COMPLETED", deadline_s=20)
        # The receiver checked every signature (401 otherwise): the same token, the body sent.
        assert receiver.states("t-1") == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]


async def test_a_wrong_signature_is_refused_by_the_receiver(tmp_path: Path) -> None:
    async with running_receiver(free_port(), token="not-the-config-token-0123") as receiver:
        store = _store(tmp_path)
        await _configure(store, receiver.url)
        push = PushNotifications(store, _reader)
        await store.open()
        await push.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 1))
        await push.deliver_due()  # one attempt: 401, a final answer
        assert receiver.received == []
        assert await store.next_due() is None  # dropped, not retried for ever
        await store.close()


async def test_failures_are_retried_with_backoff(tmp_path: Path) -> None:
    answers = [503, 500]  # then 200
    seen: list[int] = []
    third = asyncio.Event()

    async def flaky(request: Request) -> Response:
        seen.append(len(seen))
        if len(seen) == 3:
            third.set()
        return Response(status_code=answers.pop(0) if answers else 200)

    port = free_port()
    async with serving(Starlette(routes=[Route("/hook", flaky, methods=["POST"])]), port):
        store = _store(tmp_path)
        await _configure(store, f"http://127.0.0.1:{port}/hook")
        push = PushNotifications(store, _reader)
        async with delivering(push), asyncio.timeout(20):
            await push.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 1))
            await third.wait()
    assert len(seen) == 3


async def test_a_redirect_is_not_followed(tmp_path: Path) -> None:
    async with running_receiver(free_port()) as target:

        async def redirect(request: Request) -> Response:
            return Response(status_code=307, headers={"Location": target.url})

        port = free_port()
        async with serving(Starlette(routes=[Route("/hook", redirect, methods=["POST"])]), port):
            store = _store(tmp_path)
            await _configure(store, f"http://127.0.0.1:{port}/hook")
            push = PushNotifications(store, _reader)
            await store.open()
            await push.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 1))
            await push.deliver_due()
            await store.close()
        assert target.received == []  # the redirect's target never got it
        assert push.delivered == 0


async def test_a_pending_notification_survives_a_restart(tmp_path: Path) -> None:
    port = free_port()  # nobody listens yet
    store = _store(tmp_path)
    await _configure(store, f"http://127.0.0.1:{port}/hook")
    first = PushNotifications(store, _reader)
    await store.open()
    await first.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 1))
    await first.deliver_due()  # connection refused: kept, due again later
    await store.close()
    async with running_receiver(port) as receiver:
        again = PushNotifications(_store(tmp_path), _reader)  # a new process, the same file
        async with delivering(again):
            await receiver.wait_for("t-1", "TASK_STATE_COMPLETED", deadline_s=20)


async def test_configs_are_the_callers(tmp_path: Path) -> None:
    store = _store(tmp_path)
    await _configure(store, "http://127.0.0.1:9/hook", owner="accord/C-01")
    mine: ServerCallContext = owner_context("accord/C-01")
    theirs: ServerCallContext = owner_context("accord/C-02")
    assert [c.id for c in await store.get_info("t-1", mine)] == ["cfg"]
    assert await store.get_info("t-1", theirs) == []
    await store.delete_info("t-1", theirs, "cfg")  # deletes nothing of C-01's
    assert [c.id for c in await store.get_info("t-1", mine)] == ["cfg"]
    assert [o for o, _ in await store.owners_of("t-1")] == ["accord/C-01"]
    await store.close()


async def test_an_id_less_config_gets_its_own_id(tmp_path: Path) -> None:
    store = _store(tmp_path)
    config = TaskPushNotificationConfig(url="http://127.0.0.1:9/hook", token=TOKEN)
    stored = await store.set_info("t-1", config, owner_context("accord/C-01"))
    assert stored.id
    assert stored.id != "t-1"
    assert stored.task_id == "t-1"
    await store.close()


async def test_the_request_goes_to_the_checked_address_with_the_callers_credentials(
    tmp_path: Path,
) -> None:
    """The name is resolved once, checked, and the connection made to that address (Host
    keeps the name); the config's `authentication` is sent as its Authorization header."""
    got: list[dict[str, str]] = []
    arrived = asyncio.Event()

    async def capture(request: Request) -> Response:
        got.append(dict(request.headers))
        arrived.set()
        return Response(status_code=204)

    port = free_port()
    async with serving(Starlette(routes=[Route("/hook", capture, methods=["POST"])]), port):
        store = _store(tmp_path)
        config = TaskPushNotificationConfig(
            task_id="t-1", id="cfg", url=f"http://localhost:{port}/hook", token=TOKEN
        )
        config.authentication.scheme = "Bearer"
        config.authentication.credentials = "receiver-credential"
        await store.set_info("t-1", config, owner_context("accord/C-01"))
        push = PushNotifications(store, _reader)
        async with delivering(push), asyncio.timeout(20):
            await push.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 1))
            await arrived.wait()
    assert got[0]["host"] == f"localhost:{port}"
    assert got[0]["authorization"] == "Bearer receiver-credential"
    assert got[0]["content-type"] == "application/json"


def test_a_pinned_https_request_verifies_the_certificate_against_the_name() -> None:
    request = pinned("https://hooks.example.com:8443/a?b=1", ipaddress.ip_address("93.184.215.14"))
    assert request.url == "https://93.184.215.14:8443/a?b=1"
    assert request.host_header == "hooks.example.com:8443"
    assert request.extensions == {"sni_hostname": "hooks.example.com"}
    v6 = pinned("http://localhost:9/x", ipaddress.ip_address("::1"))
    assert v6.url == "http://[::1]:9/x"
    assert v6.extensions == {}


async def test_a_change_not_recorded_before_a_crash_is_sent_at_start_once(tmp_path: Path) -> None:
    """The process died after the task changed and before the change reached the outbox: the
    next start reads every followed task again; a change recorded already is not sent again."""
    completed = _task(TaskState.TASK_STATE_COMPLETED, 5)

    async def record(task_id: str, owner: str) -> Task | None:
        return completed if (task_id, owner) == ("t-1", "accord/C-01") else None

    async with running_receiver(free_port()) as receiver:
        store = _store(tmp_path)
        await _configure(store, receiver.url)
        await store.close()
        first = PushNotifications(_store(tmp_path), record)
        async with delivering(first):
            await receiver.wait_for("t-1", "TASK_STATE_COMPLETED", deadline_s=20)
        second = PushNotifications(_store(tmp_path), record)
        await second.store.open()
        # What the first process may have sent without settling it yet goes again (the same
        # notification id: the receiver drops the repeat), and nothing else.
        await second.deliver_due()
        await second.send_notification("t-1", completed)  # the same change, seen again
        assert await second.store.unfinished_tasks() == []  # terminal: not read at start
        assert await second.store.next_due() is None  # nothing new was recorded
        await second.store.close()
    assert receiver.states("t-1") == ["TASK_STATE_COMPLETED"]


@pytest.mark.postgres
async def test_the_outbox_on_postgresql(postgres_url: str) -> None:
    """The same store on PostgreSQL: a config, a recorded change, a claim, a delivery."""
    async with running_receiver(free_port()) as receiver:
        store = PushStore(
            postgres_url, table="a2a_push_pgtest", policy=DEV, secrets=PushSecrets(KEY)
        )
        await _configure(store, receiver.url)
        push = PushNotifications(store, _reader)
        await store.open()
        await push.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 1))
        await push.send_notification("t-1", _task(TaskState.TASK_STATE_COMPLETED, 1))
        await push.deliver_due()
        assert push.delivered == 1
        assert await store.next_due() is None
        await store.close()
    assert receiver.states("t-1") == ["TASK_STATE_COMPLETED"]
