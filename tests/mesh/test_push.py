"""Push notifications from the real orchestrator: an approval that takes a while is learnt by
push, not by polling; configs are the caller's; a pending notification survives kill -9."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from accord.contracts.errors import ErrorCode, code_for_jsonrpc
from accord.contracts.status import WaitingReason
from tests.mesh.push_support import create_config, rest, rpc
from tests.mesh.support import Mesh, approve, ask, running_mesh
from tests.support.processes import free_port
from tests.support.push_receiver import TOKEN, running_receiver

COMPLETED = "TASK_STATE_COMPLETED"
DEV = {"ACCORD_DEV": "1"}  # development mode: http to a loopback receiver is allowed


@pytest.fixture(scope="module")
def push_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("push"), orchestrator_env=DEV) as mesh:
        yield mesh


def _error_code(answer: dict[str, object]) -> ErrorCode | None:
    error = answer.get("error")
    assert isinstance(error, dict), answer
    return code_for_jsonrpc(int(error["code"]))


# High risk, so an approver decides: O-1004 (C-03) by amount (at least 500.00 of its 1,299.00,
# so once per mesh), O-1006 (C-04, five refunds in 90 days) for any amount (small ones here).
async def _waiting_refund(mesh: Mesh, subject: str, order: str, amount: str) -> str:
    view = await ask(mesh, subject, f"I changed my mind, please refund ${amount} of order {order}")
    assert view.waiting_reason is WaitingReason.APPROVAL, view
    return view.task_id


async def test_an_approval_is_learnt_by_push(push_mesh: Mesh) -> None:
    mesh = push_mesh
    async with running_receiver(free_port()) as receiver:
        task_id = await _waiting_refund(mesh, "C-03", "O-1004", "500")
        created = await create_config(mesh, "C-03", task_id, receiver.url, TOKEN)
        config = created["result"]
        assert config["taskId"] == task_id, created
        assert config["url"] == receiver.url
        decided = await approve(mesh, "approver-1", ("approver",), task_id)
        assert decided.error is None, decided.error
        note = await receiver.wait_for(task_id, COMPLETED, deadline_s=60)
        assert note.task["metadata"] or note.task["status"]  # the whole task, as its owner sees it
        # Each change once (changes in quick succession may come as one, the latest state).
        states = receiver.states(task_id)
        assert states.count(COMPLETED) == 1, states

        # The config can be read, listed and deleted by its owner, over both bindings.
        got = await rpc(
            mesh, "C-03", "GetTaskPushNotificationConfig", {"taskId": task_id, "id": config["id"]}
        )
        assert got["result"]["id"] == config["id"], got
        listed = await rest(mesh, "C-03", "GET", f"/tasks/{task_id}/pushNotificationConfigs")
        assert listed.status_code == 200, listed.text
        assert [c["id"] for c in listed.json()["configs"]] == [config["id"]]
        gone = await rest(
            mesh, "C-03", "DELETE", f"/tasks/{task_id}/pushNotificationConfigs/{config['id']}"
        )
        assert gone.status_code == 200, gone.text
        empty = await rpc(mesh, "C-03", "ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert empty["result"].get("configs", []) == [], empty


async def test_another_callers_config_is_not_found(push_mesh: Mesh) -> None:
    mesh = push_mesh
    task_id = await _waiting_refund(mesh, "C-04", "O-1006", "5")
    url = f"http://127.0.0.1:{free_port()}/hook"
    config = (await create_config(mesh, "C-04", task_id, url, TOKEN))["result"]
    for method, params in (
        ("GetTaskPushNotificationConfig", {"taskId": task_id, "id": config["id"]}),
        ("ListTaskPushNotificationConfigs", {"taskId": task_id}),
        ("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": config["id"]}),
        ("CreateTaskPushNotificationConfig", {"taskId": task_id, "url": url, "token": TOKEN}),
    ):
        answer = await rpc(mesh, "C-99", method, params)
        assert _error_code(answer) is ErrorCode.NOT_FOUND, (method, answer)
    # ... and the owner's config is still there.
    mine = await rpc(mesh, "C-04", "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert [c["id"] for c in mine["result"]["configs"]] == [config["id"]]


async def test_refused_configs(push_mesh: Mesh) -> None:
    mesh = push_mesh
    task_id = await _waiting_refund(mesh, "C-04", "O-1006", "5")
    for url, push_token, why in (
        ("http://example.com/hook", TOKEN, "https"),
        ("https://example.com/hook", TOKEN, "ACCORD_PUSH_ALLOWED_HOSTS"),
        ("ftp://127.0.0.1/hook", TOKEN, "https"),
    ):
        answer = await create_config(mesh, "C-04", task_id, url, push_token)
        assert _error_code(answer) is ErrorCode.INVALID_INPUT, (url, answer)
        assert why in str(answer["error"]), answer


async def test_a_standard_config_is_accepted_and_its_credentials_never_read_back(
    push_mesh: Mesh,
) -> None:
    """A2A 1.0.1: no token (or a short one) is fine; ``authentication`` is kept. No answer, on
    either binding, carries the token or the credentials: they are the caller's secrets."""
    mesh = push_mesh
    task_id = await _waiting_refund(mesh, "C-04", "O-1006", "6")
    url = f"http://127.0.0.1:{free_port()}/hook"
    bare = await create_config(mesh, "C-04", task_id, url)
    assert "result" in bare, bare
    secret = "receiver-credential-5d1e8a0c"
    auth = {"scheme": "Bearer", "credentials": secret}
    made = await create_config(mesh, "C-04", task_id, url, "short", authentication=auth)
    config = made["result"]
    got = await rpc(
        mesh, "C-04", "GetTaskPushNotificationConfig", {"taskId": task_id, "id": config["id"]}
    )
    listed = await rest(mesh, "C-04", "GET", f"/tasks/{task_id}/pushNotificationConfigs")
    rpc_list = await rpc(mesh, "C-04", "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert listed.status_code == 200, listed.text
    configs = [bare["result"], config, got["result"]]
    configs += listed.json()["configs"] + rpc_list["result"]["configs"]
    assert len(configs) == 7
    for answered in configs:
        assert "token" not in answered, answered
        assert "credentials" not in answered.get("authentication", {}), answered
        assert secret not in str(answered), answered
    assert got["result"]["authentication"] == {"scheme": "Bearer"}, got


def _pending(data_dir: Path) -> int:
    with sqlite3.connect(data_dir / "orchestrator.db") as conn:
        return int(conn.execute("SELECT count(*) FROM a2a_push_orchestrator_outbox").fetchone()[0])


def _until_pending(data_dir: Path, deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    while _pending(data_dir) == 0:
        if time.monotonic() > end:
            raise TimeoutError("no pending push notification within the deadline")
        time.sleep(0.05)  # reading a database file, bounded by the deadline


async def test_a_pending_notification_survives_kill_9(push_mesh: Mesh) -> None:
    mesh = push_mesh
    port = free_port()  # nothing listens there yet: every delivery attempt fails
    task_id = await _waiting_refund(mesh, "C-04", "O-1006", "10")
    url = f"http://127.0.0.1:{port}/hook"
    assert "result" in await create_config(mesh, "C-04", task_id, url, TOKEN)
    decided = await approve(mesh, "approver-1", ("approver",), task_id)
    assert decided.error is None, decided.error
    _until_pending(mesh.data_dir)  # the state change is recorded, not delivered
    mesh.restart_orchestrator(DEV)  # SIGKILL: no shutdown code runs; then start again
    async with running_receiver(port) as receiver:
        await receiver.wait_for(task_id, COMPLETED, deadline_s=60)
