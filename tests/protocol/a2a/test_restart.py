"""Tasks survive a crash (kill -9): completed tasks stay readable, a task that was running is
failed with UNAVAILABLE, a waiting task can still be continued. SQLite and PostgreSQL.

On SQLite (one process per file) the restarted agent fails the dead one's running task at
once; on PostgreSQL (replicas share the database) only once the dead process's heartbeat has
expired, by the database's clock: a short TTL here, read with a deadline."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import STATUS_META_KEY
from accord.contracts.status import Status
from accord.protocol.a2a.server.store import RESTART_MESSAGE
from accord.protocol.auth import mint_token
from tests.protocol.a2a.conftest import run_agent
from tests.protocol.a2a.helpers import contract_state
from tests.protocol.a2a.wire_client import AgentClient, auth, message


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, data_dir: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{data_dir / 'restart.db'}"
    return str(request.getfixturevalue("postgres_url"))


WORKER_TTL = {"ACCORD_TASK_WORKER_TTL_S": "1.5"}


def settled_running(client: AgentClient, headers: dict[str, str], task_id: str) -> dict[str, Any]:
    """The task once it is no longer running (recovery fails it), within a deadline."""
    end = time.monotonic() + 30
    while True:
        found = client.get(headers, task_id).task
        if found["status"]["state"] != "TASK_STATE_WORKING" or time.monotonic() > end:
            return found
        time.sleep(0.1)  # polling the recovery sweep, bounded by the deadline


def test_tasks_survive_kill_9(data_dir: Path, log_dir: Path, db_url: str) -> None:
    with run_agent(data_dir, log_dir, db_url=db_url, env=WORKER_TTL) as first:
        headers = auth(mint_token("C-61", ["customer"]))
        with AgentClient(first.url, "jsonrpc") as client:
            done = client.send(headers, message({"mode": "complete", "n": 4})).task
            waiting = client.send(headers, message({"mode": "ask"})).task
            to_cancel = client.send(headers, message({"mode": "ask"})).task
            running = client.send(
                headers, message({"mode": "sleep", "seconds": 60}), blocking=False
            ).task
            end = time.monotonic() + 20
            while client.get(headers, running["id"]).state != "TASK_STATE_WORKING":
                assert time.monotonic() < end, "task never started"
                time.sleep(0.05)  # polling interval, bounded by the deadline
        first.kill()  # SIGKILL: no shutdown hook runs

    with run_agent(data_dir, log_dir, db_url=db_url, env=WORKER_TTL) as second:
        for transport in ("jsonrpc", "rest"):
            with AgentClient(second.url, transport) as client:
                kept = client.get(headers, done["id"]).task
                assert kept["status"]["state"] == "TASK_STATE_COMPLETED"
                assert kept["artifacts"] == done["artifacts"]

                crashed = settled_running(client, headers, running["id"])
                state, error = contract_state(crashed)
                assert state.status is Status.FAILED
                assert error is not None
                assert error.code is ErrorCode.UNAVAILABLE
                assert error.message == RESTART_MESSAGE

                assert client.get(headers, waiting["id"]).state == "TASK_STATE_INPUT_REQUIRED"
        with AgentClient(second.url, "rest") as client:
            # Not live in this process: canceled by a store write that keeps the contract.
            canceled = client.cancel(headers, to_cancel["id"]).task
            state, error = contract_state(canceled)
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
            assert error is not None
            assert error.code is ErrorCode.CANCELED
            meta = canceled["status"]["message"]["metadata"][STATUS_META_KEY]
            assert meta["status"] == "failed"
            assert meta["error"]["code"] == ErrorCode.CANCELED.value
            resumed = client.send(headers, message(text="7", task_id=waiting["id"]))
            assert resumed.state == "TASK_STATE_COMPLETED"
            assert resumed.task["artifacts"][0]["parts"][0]["data"]["echo"] == "7"
            assert {t["id"] for t in client.list(headers).body["tasks"]} == {
                done["id"],
                waiting["id"],
                to_cancel["id"],
                running["id"],
            }
