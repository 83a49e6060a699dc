"""Tenant isolation: another principal's task id is NOT_FOUND for every operation, and its
data never shows; over both transports."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from accord.contracts.errors import ErrorCode
from tests.protocol.a2a.wire_client import AgentClient, auth, message


@pytest.mark.parametrize("intruder", [("C-52", "accord"), ("C-51", "other-app")])
def test_other_tenants_tasks_are_not_found(
    client: AgentClient, token_for: Callable[..., str], intruder: tuple[str, str]
) -> None:
    owner = auth(token_for(f"C-51-{client.transport}"))
    subject, app = intruder
    other = auth(
        token_for(
            f"{subject}-{client.transport}" if subject == "C-52" else f"C-51-{client.transport}",
            app=app,
        )
    )
    done = client.send(owner, message({"mode": "complete", "n": 9})).task
    waiting = client.send(owner, message({"mode": "ask"})).task
    running = client.send(owner, message({"mode": "sleep", "seconds": 20}), blocking=False).task
    secret_marker = done["artifacts"][0]["artifactId"]

    for task in (done, waiting, running):
        answers = {
            "get": client.get(other, task["id"]),
            "cancel": client.cancel(other, task["id"]),
            "subscribe": client.subscribe(other, task["id"]),
            "send": client.send(other, message(text="hijack", task_id=task["id"])),
        }
        for op, answer in answers.items():
            assert answer.error is not None, (op, answer.body)
            assert answer.error.code is ErrorCode.NOT_FOUND, (op, answer.error)
            assert secret_marker not in str(answer.body)
            if client.transport == "rest":
                assert answer.status == 404, op
    listed = client.list(other).body.get("tasks", [])
    assert {t["id"] for t in listed}.isdisjoint({done["id"], waiting["id"], running["id"]})

    # The owner's tasks are untouched by the attempts.
    assert client.get(owner, waiting["id"]).state == "TASK_STATE_INPUT_REQUIRED"
    assert client.get(owner, running["id"]).state in ("TASK_STATE_WORKING", "TASK_STATE_SUBMITTED")
    owned = {t["id"] for t in client.list(owner).body["tasks"]}
    assert {done["id"], waiting["id"], running["id"]} <= owned
    assert client.cancel(owner, running["id"]).error is None
