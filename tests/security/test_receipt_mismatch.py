"""A receipt found under a refund's key must be that refund, or the workflow stops.

Found against a running mesh (issue #12): with ``refund:O-1005`` issued for one cent directly
on payments, the customer's real request for O-1005 was answered "Your refund of 0.01 USD has
been issued": the orchestrator took the receipt ``refunds.get`` found under the key without
comparing it with the refund it had decided. Now the receipt must match the request (amount,
currency, order, customer, key) or the workflow stops with IDEMPOTENCY_CONFLICT; the customer
is told neutrally that a person will look at it (never an amount), and the approvers of the
customer's app are told: an ``attention`` item in their queue and a WARNING log line
(docs/security-a2a.md).

The attacker holds a service credential granted ``refunds.issue`` (a compromised service) and
sends it to payments with a delegation naming the customer: everything the tool server asks
for, so the orchestrator's own rule is what is tested. Since issue 13 the key names the
request (``refund:<order_id>:<task id>``), so the attacker must learn the task id first: the
test pauses the workflow after its order lookup (a pause point), issues under that key, and
lets the workflow go on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from accord.agents.refund.pause_points import MARKER as PAUSE_MARKER
from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.auth import mint_token
from tests.mesh.mesh_support import Mesh, endpoint
from tests.mesh.support import SECRET, ask, get_task, running_mesh
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import delegation_meta

pytestmark = pytest.mark.timeout(300)

PAUSE_S = 8  # long enough to issue one refund directly while the workflow waits
PAUSE_ENV = {"ACCORD_TEST_PAUSE": f"order.after_lookup@O-1005:{PAUSE_S}", "ACCORD_DEV": "1"}


@pytest.fixture(scope="module")
def mesh_for_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("mismatch"), orchestrator_env=PAUSE_ENV) as mesh:
        yield mesh


async def _issue_directly(mesh: Mesh, amount_cents: int, key: str) -> dict[str, Any]:
    """The attack: refunds.issue on payments itself, under the key the workflow will use."""
    bearer = sign_as(TEST_SERVICE, scopes=["refunds.issue"])  # a trusted service's stolen key
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=30) as http,
        streamable_http_client(endpoint(mesh, "payments"), http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool(
            "refunds.issue",
            {
                "idempotency_key": key,
                "order_id": "O-1005",
                "customer_id": "C-01",
                "amount_cents": amount_cents,
                "reason": "pre-empted",
            },
            # A granted service may say whom it acts for: the attack needs nothing more.
            meta=delegation_meta("C-01"),
        )
    assert not result.is_error, result.content
    return dict(result.structured_content or {})


def _queue(mesh: Mesh, subject: str, app: str = "accord") -> list[dict[str, Any]]:
    bearer = mint_token(subject, ["approver"], app=app, secret=SECRET)
    answer = httpx.get(
        mesh.orchestrator + "/approvals",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {bearer}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["approvals"])


@pytest.fixture
def mesh_env_secret(mesh_for_module: Mesh, monkeypatch: pytest.MonkeyPatch) -> Mesh:
    # service_token() signs with ACCORD_JWT_SECRET: the mesh's, as a stolen grant would be.
    monkeypatch.setenv("ACCORD_JWT_SECRET", SECRET)
    return mesh_for_module


async def test_a_pre_empted_refund_stops_and_an_approver_is_told(mesh_env_secret: Mesh) -> None:
    mesh = mesh_env_secret
    updates: list[Any] = []
    call = asyncio.create_task(
        ask(mesh, "C-01", "I changed my mind about the mug, refund order O-1005", updates)
    )
    await asyncio.to_thread(mesh.wait_for_log, f"{PAUSE_MARKER} order.after_lookup@O-1005", 90.0)
    assert updates, "the task streams before its order lookup"
    issued = await _issue_directly(mesh, 1, f"refund:O-1005:{updates[0].task_id}")
    assert issued["receipt"]["amount_cents"] == 1

    view = await call

    # The customer: stopped, told neutrally, never the attacker's amount.
    assert view.status is Status.FAILED, view.data
    assert view.error is not None
    assert view.error.code is ErrorCode.IDEMPOTENCY_CONFLICT
    told = json.dumps(view.to_dict(), ensure_ascii=False)
    assert "0.01" not in told
    assert "a person" in view.error.message.lower()
    again = await get_task(mesh, "C-01", view.task_id)
    assert again.status is Status.FAILED
    assert "0.01" not in json.dumps(again.to_dict(), ensure_ascii=False)
    # Nothing more was paid: the ledger holds the attacker's cent only.
    assert mesh.refund_rows().get("O-1005") == 1

    # The approvers of the customer's app: an item that needs attention, with what differs.
    items = [i for i in _queue(mesh, "approver-1") if i["task_id"] == view.task_id]
    assert [i["kind"] for i in items] == ["attention"]
    facts = items[0]["facts"]
    assert items[0]["code"] == ErrorCode.IDEMPOTENCY_CONFLICT.value
    assert facts["order_id"] == "O-1005"
    assert facts["amount_cents"] == 3500
    assert facts["found"]["amount_cents"] == 1
    assert "amount_cents" in facts["mismatched"]
    # ...and nobody else's queue.
    assert not [i for i in _queue(mesh, "approver-9", app="shop") if i["task_id"] == view.task_id]
    # ...and the log says so, at WARNING.
    mesh.wait_for_log(f"refund task {view.task_id} needs a person")
    line = next(
        ln for ln in mesh.orchestrator_log().splitlines() if f"refund task {view.task_id}" in ln
    )
    assert "WARNING" in line
