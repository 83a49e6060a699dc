"""A waiting task answered after a turn's deadline: an end user's synthesised envelope gives each
turn a fresh deadline, while a caller's own envelope keeps binding (ENV-005)."""

from __future__ import annotations

import time
from pathlib import Path

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.auth import mint_token
from tests.protocol.a2a.conftest import run_agent
from tests.protocol.a2a.helpers import contract_state, envelope
from tests.protocol.a2a.wire_client import AgentClient, auth, message
from tests.support.service_keys import TEST_SERVICE, sign_as

TURN_S = 1.0


def _wait_past(moment: float) -> None:
    # The behaviour under test is the clock passing a deadline; wait for exactly that.
    while time.monotonic() <= moment:
        time.sleep(0.05)


def test_answers_after_a_turn_deadline(data_dir: Path, log_dir: Path) -> None:
    env = {"ACCORD_TURN_DEADLINE_S": str(TURN_S)}
    with run_agent(data_dir, log_dir, env=env) as agent, AgentClient(agent.url, "jsonrpc") as c:
        customer = auth(mint_token("C-71", ["customer"]))
        own = c.send(customer, message({"mode": "ask"})).task
        service = auth(sign_as(TEST_SERVICE))
        bound = c.send(
            service, message({"mode": "ask"}, metadata=envelope("C-71", deadline_s=TURN_S))
        ).task
        assert own["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert bound["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        _wait_past(time.monotonic() + TURN_S + 0.2)

        answered = c.send(customer, message(text="42", task_id=own["id"])).task
        state, _ = contract_state(answered)
        assert state.status is Status.COMPLETED

        late = c.send(service, message(text="42", task_id=bound["id"])).task
        state, error = contract_state(late)
        assert state.status is Status.FAILED
        assert error is not None
        assert error.code is ErrorCode.RETRYABLE_TIMEOUT
