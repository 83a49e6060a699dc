"""`accord card` and `accord call` as subprocesses against a real policy-check process."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator

import pytest
from tests.protocol.a2a_client.support import SECRET, policy_input, policy_service, token
from tests.support import forked
from tests.support.processes import Service

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status, WaitingReason


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("cli-policy")
    (root / "logs").mkdir()
    with policy_service(root / "data", root / "logs") as svc:
        yield svc


def accord(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ACCORD_JWT_SECRET": SECRET, "COLUMNS": "200"}
    return forked.run(args, env)


def test_card_shows_the_agent_and_its_accord_extensions(policy: Service) -> None:
    run = accord("card", policy.url)
    assert run.returncode == 0, run.stderr
    assert "policy-check" in run.stdout
    assert "Accord contract extension:   yes" in run.stdout
    assert "Accord delegation extension: yes" in run.stdout
    assert "refund.policy" in run.stdout


def test_call_asks_then_the_answer_continues_the_same_task(policy: Service) -> None:
    # A minted dev token for C-01 (the default user), signed with the shared test secret.
    first = accord("call", policy.url, "--data", json.dumps(policy_input("damaged")), "--json")
    assert first.returncode == 0, first.stderr
    view = json.loads(first.stdout.strip().splitlines()[-1])
    assert (view["status"], view["waiting_reason"]) == (
        Status.WAITING.value,
        WaitingReason.INPUT.value,
    )
    assert "photo" in view["question"]
    second = accord(
        "call",
        policy.url,
        "the lid is cracked, photo IMG-42",
        "--task",
        view["task_id"],
        "--transport",
        "rest",
        "--token",
        token("C-01"),
    )
    assert second.returncode == 0, second.stderr
    assert "running @policy" in second.stdout  # the streamed status updates are shown
    assert "completed" in second.stdout
    assert "damage_with_evidence" in second.stdout


def test_a_failed_task_exits_non_zero_and_names_the_code(policy: Service) -> None:
    run = accord("call", policy.url, "--data", json.dumps({"reason": "damaged"}))
    assert run.returncode == 1
    assert ErrorCode.INVALID_INPUT.value in run.stdout


def test_an_unreachable_agent_is_a_call_failure() -> None:
    run = accord("card", "http://127.0.0.1:9")
    assert run.returncode == 1
    assert ErrorCode.UNAVAILABLE.value in run.stderr
