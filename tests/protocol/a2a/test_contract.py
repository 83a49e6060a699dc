"""The executor keeps the contract: statuses with metadata, errors as codes, envelope, budget,
deadline, schemas, waiting and continuation, cancel; over both transports."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import (
    DELEGATION_EXTENSION_URI,
    ERROR_DATA_KIND,
    STATE_META_KEY,
    STATUS_META_KEY,
)
from accord.contracts.status import Status, WaitingReason
from tests.protocol.a2a.helpers import contract_state, envelope
from tests.protocol.a2a.wire_client import AgentClient, auth, message
from tests.support.processes import Service


def failed_with(task: dict[str, Any], code: ErrorCode) -> dict[str, Any]:
    state, error = contract_state(task)
    assert state.status is Status.FAILED, task["status"]
    assert error is not None
    assert error.code is code, error
    status_message = task["status"]["message"]
    meta = status_message["metadata"][STATUS_META_KEY]
    assert meta["status"] == "failed"
    assert meta["error"]["code"] == code.value
    kinds = [p["data"] for p in status_message["parts"] if "data" in p]
    assert kinds
    assert kinds[0]["kind"] == ERROR_DATA_KIND
    assert kinds[0]["code"] == code.value
    return task


def wait_for(
    client: AgentClient,
    headers: dict[str, str],
    task_id: str,
    predicate: Callable[[dict[str, Any]], bool],
    deadline_s: float = 20.0,
) -> dict[str, Any]:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        task = client.get(headers, task_id).task
        if predicate(task):
            return task
        time.sleep(0.05)  # polling interval, bounded by the deadline
    raise AssertionError(f"task {task_id} never reached the expected state")


def test_waiting_then_continuation_completes(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    headers = auth(token_for("C-01"))
    first = client.send(headers, message({"mode": "ask"}))
    state, _ = contract_state(first.task)
    assert state.status is Status.WAITING
    assert state.waiting_reason is WaitingReason.INPUT
    assert first.state == "TASK_STATE_INPUT_REQUIRED"
    meta = first.task["status"]["message"]["metadata"][STATUS_META_KEY]
    # lowerCamelCase as A2A's JSON, and nothing else (contract 2.0 dropped `waiting_reason`).
    assert meta == {"status": "waiting", "waitingReason": "input", "error": None, "node": None}
    second = client.send(headers, message(text="42", task_id=first.task["id"]))
    assert second.state == "TASK_STATE_COMPLETED"
    assert second.task["artifacts"][0]["parts"][0]["data"] == {"echo": "42", "user": "C-01"}
    assert second.task["metadata"][STATE_META_KEY] == {"asked": True}
    again = client.send(headers, message(text="43", task_id=first.task["id"]))
    assert again.error is not None
    assert again.error.code is ErrorCode.UNSUPPORTED_OPERATION


def test_progress_is_reported_and_completion_is_legal(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    answer = client.send(auth(token_for("C-01")), message({"mode": "progress"}))
    assert answer.state == "TASK_STATE_COMPLETED"
    nodes = [
        m["metadata"][STATUS_META_KEY]["node"]
        for m in answer.task["history"]
        if m["role"] == "ROLE_AGENT"
    ]
    # The bare RUNNING that opened the task said nothing: it is no message (A2A 1.0 requires a
    # part), and the task's metadata holds the current status.
    assert nodes == ["one", "two"]
    assert answer.task["metadata"][STATUS_META_KEY]["status"] == "completed"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"mode": "raise"}, ErrorCode.INTERNAL),
        ({"mode": "deny"}, ErrorCode.POLICY_DENIED),
        ({"mode": "bad_output"}, ErrorCode.CONTRACT_VIOLATION),
        ({"mode": "complete", "n": "three"}, ErrorCode.INVALID_INPUT),
        ({"mode": "complete", "extra": 1}, ErrorCode.INVALID_INPUT),
        (None, ErrorCode.INVALID_INPUT),
    ],
)
def test_failures_carry_their_code(
    client: AgentClient, token_for: Callable[..., str], data: dict[str, Any] | None, code: ErrorCode
) -> None:
    msg = message(data) if data is not None else message(text="hello")
    task = failed_with(client.send(auth(token_for("C-01")), msg).task, code)
    if code is ErrorCode.INTERNAL:
        assert "internal detail" not in str(task)


def test_budget_exhausted_fails_the_task(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    msg = message({"mode": "complete"}, metadata=envelope("C-01", units=0))
    failed_with(client.send(auth(token_for("C-01")), msg).task, ErrorCode.BUDGET_EXHAUSTED)


def test_past_deadline_fails_with_retryable_timeout(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    msg = message({"mode": "complete"}, metadata=envelope("C-01", deadline_s=-1))
    failed_with(client.send(auth(token_for("C-01")), msg).task, ErrorCode.RETRYABLE_TIMEOUT)


def test_deadline_passing_while_working_fails_the_task(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    msg = message({"mode": "sleep", "seconds": 30}, metadata=envelope("C-01", deadline_s=1.0))
    started = time.monotonic()
    task = client.send(auth(token_for("C-01")), msg).task
    assert time.monotonic() - started < 15
    failed_with(task, ErrorCode.RETRYABLE_TIMEOUT)


@pytest.mark.parametrize(
    "bad",
    [
        {"goal": "x"},
        {
            "goal": "x",
            "budget": {"units": -1, "tool_calls": 1, "deadline": "2030-01-01T00:00:00Z"},
            "tenant": {"app": "accord", "user": "C-01", "session": "s"},
        },
        "not an object",
    ],
)
def test_bad_envelopes_are_invalid_input_and_store_nothing(
    client: AgentClient, token_for: Callable[..., str], bad: Any
) -> None:
    headers = auth(token_for(f"C-40-{client.transport}"))
    answer = client.send(
        headers, message({"mode": "complete"}, metadata={DELEGATION_EXTENSION_URI: bad})
    )
    assert answer.error is not None
    assert answer.error.code is ErrorCode.INVALID_INPUT
    assert client.list(headers).body.get("tasks", []) == []


def test_customer_cannot_act_on_behalf_of_another_user(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    user = f"C-41-{client.transport}"
    headers = auth(token_for(user))
    for env in (envelope("C-02"), envelope(user, app="other-app")):
        answer = client.send(headers, message({"mode": "complete"}, metadata=env))
        assert answer.error is not None
        assert answer.error.code is ErrorCode.PERMISSION_DENIED
    assert client.list(headers).body.get("tasks", []) == []
    own = client.send(headers, message({"mode": "complete"}, metadata=envelope(user)))
    assert own.state == "TASK_STATE_COMPLETED"


def test_service_acts_on_behalf_and_owns_the_task(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    service = auth(token_for("svc:orchestrator", "service"))
    answer = client.send(service, message({"mode": "complete"}, metadata=envelope("C-02")))
    assert answer.state == "TASK_STATE_COMPLETED"
    task_id = answer.task["id"]
    assert client.get(service, task_id).error is None
    customer = client.get(auth(token_for("C-02")), task_id)
    assert customer.error is not None
    assert customer.error.code is ErrorCode.NOT_FOUND


def test_service_must_send_an_envelope(client: AgentClient, token_for: Callable[..., str]) -> None:
    service = auth(token_for("svc:orchestrator", "service"))
    answer = client.send(service, message({"mode": "complete"}))
    assert answer.error is not None
    assert answer.error.code is ErrorCode.INVALID_INPUT
    assert "envelope" in answer.error.message


def test_cancel_running_and_waiting_tasks(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    headers = auth(token_for("C-01"))
    running = client.send(headers, message({"mode": "sleep", "seconds": 30}), blocking=False)
    task_id = running.task["id"]
    wait_for(client, headers, task_id, lambda t: t["status"]["state"] == "TASK_STATE_WORKING")
    canceled = client.cancel(headers, task_id)
    assert canceled.error is None
    task = wait_for(
        client, headers, task_id, lambda t: t["status"]["state"] == "TASK_STATE_CANCELED"
    )
    failed_with(task, ErrorCode.CANCELED)

    waiting = client.send(headers, message({"mode": "ask"}))
    assert client.cancel(headers, waiting.task["id"]).state == "TASK_STATE_CANCELED"
    failed_with(client.get(headers, waiting.task["id"]).task, ErrorCode.CANCELED)


def test_cancel_of_a_terminal_task_is_refused(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    headers = auth(token_for("C-01"))
    done = client.send(headers, message({"mode": "complete"}))
    refused = client.cancel(headers, done.task["id"])
    assert refused.error is not None
    assert refused.error.code is ErrorCode.TASK_NOT_CANCELABLE
    assert client.get(headers, done.task["id"]).state == "TASK_STATE_COMPLETED"


def test_streaming_reports_each_step(agent: Service, token_for: Callable[..., str]) -> None:
    headers = auth(token_for("C-01"))
    body = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "SendStreamingMessage",
        "params": {"message": message({"mode": "progress"})},
    }
    events: list[dict[str, Any]] = []
    with httpx.stream("POST", agent.url + "/", json=body, headers=headers, timeout=30) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:])["result"])
    states = [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e]
    assert states == [
        "TASK_STATE_WORKING",
        "TASK_STATE_WORKING",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
    ]
    updates = [e["statusUpdate"] for e in events if "statusUpdate" in e]
    nodes = [u["metadata"][STATUS_META_KEY]["node"] for u in updates]
    assert nodes[1:3] == ["one", "two"]
    assert all(u["status"]["message"]["parts"] for u in updates if "message" in u["status"])
    assert any("artifactUpdate" in e for e in events)
