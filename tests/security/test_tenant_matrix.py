"""The cross-tenant matrix on the real orchestrator: a customer's tasks (done, waiting for
the customer, waiting for an approver) are NOT_FOUND for every other principal and every
operation (get, cancel, continue, subscribe, list), over A2A's JSON-RPC binding, and stay
untouched afterwards.

Intruders: another customer of the same app, the same subject in another app, an approver
(approvers act through the refund.approve skill, never on the customer's task) and a service
principal (its tasks are its own scope).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.auth import mint_token
from tests.mesh.support import SECRET, Mesh, ask, get_task
from tests.support.service_keys import TEST_SERVICE, sign_as

pytestmark = pytest.mark.timeout(180)

Principal = tuple[str, str, tuple[str, ...]]  # subject, app, roles


def intruders(owner: str) -> dict[str, Principal]:
    return {
        "other customer": ("C-02", "accord", ("customer",)),
        "same subject, other app": (owner, "shop", ("customer",)),
        "approver": ("approver-1", "accord", ("approver",)),
        "service": (f"svc:{TEST_SERVICE}", "accord", ("service",)),
    }


def _token(subject: str, app: str, roles: tuple[str, ...]) -> str:
    if "service" in roles:  # a trusted service, with its own key: still not the task's owner
        return sign_as(subject.removeprefix("svc:"))
    return mint_token(subject, roles, app=app, secret=SECRET)


def _subscribe(mesh: Mesh, token: str, task_id: str) -> dict[str, Any]:
    """The first JSON-RPC answer of SubscribeToTask (an error, or the first event)."""
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    body = {"jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask", "params": {"id": task_id}}
    with httpx.stream("POST", mesh.orchestrator + "/", json=body, headers=headers, timeout=30) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                return dict(json.loads(line[5:]))
            if line.strip().startswith("{"):
                return dict(json.loads(line))
        return dict(json.loads(r.read() or b"{}"))


async def _owners_tasks(mesh: Mesh) -> dict[str, tuple[str, TaskView]]:
    done = await ask(mesh, "C-01", "鞋码不合适，想退款，订单 O-1002")
    assert done.status is Status.COMPLETED
    needs_input = await ask(mesh, "C-01", "我想退款")
    assert needs_input.waiting_reason is WaitingReason.INPUT
    needs_approval = await ask(mesh, "C-03", "I changed my mind about the laptop, refund O-1004")
    assert needs_approval.waiting_reason is WaitingReason.APPROVAL
    return {
        "done": ("C-01", done),
        "waiting for input": ("C-01", needs_input),
        "waiting for approval": ("C-03", needs_approval),
    }


async def _refused(op: str, call: Any) -> ErrorCode:
    try:
        await call
    except AccordError as error:
        return error.code
    raise AssertionError(f"{op} was answered for an intruder")


async def test_no_other_principal_reaches_a_customers_tasks(mesh: Mesh) -> None:
    tasks = await _owners_tasks(mesh)
    before = {n: (await get_task(mesh, o, t.task_id)).status for n, (o, t) in tasks.items()}
    for name, (owner, task) in tasks.items():
        for who, (subject, app, roles) in intruders(owner).items():
            token = _token(subject, app, roles)
            async with await A2AClient.connect(mesh.orchestrator, token=token) as intruder:
                listed, _ = await intruder.list_tasks(page_size=100)
                assert task.task_id not in {v.task_id for v in listed}, (who, name)
                codes = {
                    "get": await _refused("get", intruder.get(task.task_id)),
                    "cancel": await _refused("cancel", intruder.cancel(task.task_id)),
                    "continue": await _refused(
                        "continue", intruder.send(text="O-1001", task=task.task_id)
                    ),
                }
                assert codes == dict.fromkeys(codes, ErrorCode.NOT_FOUND), (who, name, codes)
                answer = _subscribe(mesh, token, task.task_id)
                assert "error" in answer, (who, name, answer)
                assert AccordError.from_jsonrpc_error(answer["error"]).code is ErrorCode.NOT_FOUND
    after = {n: (await get_task(mesh, o, t.task_id)).status for n, (o, t) in tasks.items()}
    assert after == before
