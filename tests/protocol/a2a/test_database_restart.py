"""An agent whose PostgreSQL restarts (issue #35, "the single points fail too").

A real agent process on a PostgreSQL server of the test's own, stopped (``pg_ctl stop``) and
started again on the same port and data while the agent runs:

- while the database is down, a task read is the contract's UNAVAILABLE (retry) on both
  bindings (REST: 503), never INTERNAL: the task store's error used to leave a2a-sdk's handler
  as an unhandled exception, answered -32603 / 500 "internal error", which a client must not
  retry; ``/readyz`` answers 503 (a balancer takes the replica out);
- once it is back, the same agent serves again by itself (its connection pool reconnects),
  and a task written before the restart reads as it was.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from accord.contracts.errors import ErrorCode
from accord.protocol.auth import mint_token
from tests.protocol.a2a.conftest import run_agent
from tests.protocol.a2a.wire_client import AgentClient, auth, message
from tests.support import postgres

pytestmark = pytest.mark.timeout(120)

BACK_DEADLINE_S = 30.0


@pytest.fixture
def server() -> Iterator[postgres.Server]:
    if not postgres.available():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL must be installed on CI (.ci/run installs it)")
        pytest.skip("PostgreSQL not installed (apt-get install -y postgresql)")
    with postgres.private_server(synchronous_commit=True) as started:
        yield started


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_database_restart_is_unavailable_then_served_again(
    data_dir: Path, log_dir: Path, server: postgres.Server, mode: str
) -> None:
    with run_agent(data_dir, log_dir, db_url=server.url) as agent:
        headers = auth(mint_token("C-71", ["customer"]))
        with AgentClient(agent.url, "jsonrpc") as client:
            done = client.send(headers, message({"mode": "complete", "n": 2})).task
        server.stop(mode)
        try:
            for transport in ("jsonrpc", "rest"):
                with AgentClient(agent.url, transport) as client:
                    # Twice: the first read finds the pool's dead connections, the second
                    # finds no server at all; both are the contract's retryable error.
                    for _ in range(2):
                        answer = client.get(headers, done["id"])
                        assert answer.error is not None, answer.body
                        assert answer.error.code is ErrorCode.UNAVAILABLE, answer.body
                        if transport == "rest":
                            assert answer.status == 503, answer.body
            assert httpx.get(agent.url + "/readyz", timeout=5).status_code == 503
        finally:
            server.start()
        end = time.monotonic() + BACK_DEADLINE_S
        while httpx.get(agent.url + "/readyz", timeout=5).status_code != 200:
            assert time.monotonic() < end, agent.log()[-3000:]
            time.sleep(0.1)  # polling readiness, bounded by the deadline
        for transport in ("jsonrpc", "rest"):
            with AgentClient(agent.url, transport) as client:
                assert client.get(headers, done["id"]).task == done
                again = client.send(headers, message({"mode": "complete", "n": 1})).task
                assert again["status"]["state"] == "TASK_STATE_COMPLETED"
