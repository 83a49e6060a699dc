"""The TypeScript risk-check serves the live refund in place of the Python one.

A mesh of real processes (commerce, payments, policy-check and the orchestrator from Python)
whose risk-check port is served by agents/ts/risk-check (`node dist/server.js`); no Python
risk-check runs. The orchestrator reaches it over A2A with its own service key, as it reaches
any risk-check; the member verifies that token by the orchestrator's JWKS and calls commerce
over MCP with a token signed by risk's own key. The conversations are the ones the Python
members serve (tests/interop/test_refund_python.py): an automatic refund, a refund the risk
judges high (the approver decides), and the damage claim whose evidence is asked for.

Skipped locally without the npm packages (`make npm`); on CI (CI set) it must run.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

import httpx
import pytest
from tests.interop.test_ts_member import MEMBER, _member_ready
from tests.mesh import interop_matrix
from tests.mesh.mesh_support import declared_at, python_version
from tests.mesh.support import Mesh, answer, approve, ask, customer, running_mesh, token
from tests.mesh.test_task_truth import customer_send
from tests.support.processes import Service, wait_healthy
from tests.support.service_keys import write_trust

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.auth import DEFAULT_APP
from accord.protocol.service_keys import JWKS_FILE, ensure_ring, keys_dir

pytestmark = [pytest.mark.node, pytest.mark.timeout(300)]

# The tools the member calls, the grants its token asks for (its trust entry allows them).
RISK_TOOLS: Final = ("orders.customer_history", "orders.lookup")
SLOW_MS: Final = 20_000
ORCHESTRATOR: Final = "svc:orchestrator"


def _build(env: dict[str, str]) -> None:
    for folder in (MEMBER.parents[2] / "contracts" / "ts", MEMBER):
        subprocess.run(
            ["npm", "run", "--silent", "build"], cwd=folder, env=env, check=True, timeout=120
        )


@contextmanager
def ts_member_mesh(base: Path, commerce_faults: dict[str, str] | None = None) -> Iterator[Mesh]:
    """commerce, payments, policy-check and the orchestrator (Python), and the TypeScript
    risk-check on risk-check's port, signing its tool calls with a key of its own."""
    env = _member_ready()
    _build(env)
    contract = base / "risk-check.json"
    subprocess.run(
        [sys.executable, str(MEMBER / "scripts" / "export_contract.py"), str(contract)],
        env=env,
        check=True,
        timeout=60,
    )
    # The orchestrator's key exists before it starts, so the member can read its JWKS file.
    ensure_ring("orchestrator", keys_dir())
    services = ("payments", "policy", "orchestrator")
    with running_mesh(base, services=services) as mesh:
        # commerce trusts the member by the key set the member publishes (made on its first
        # start), so it starts once the member's port is known.
        trust = write_trust(
            base / "trust.yaml",
            {
                "risk": {
                    "jwks": f"{mesh.url('risk')}/.well-known/jwks.json",
                    "grants": list(RISK_TOOLS),
                    "tenants": ["accord"],
                }
            },
        )
        commerce_env = {"ACCORD_SERVICE_TRUST": str(trust), **(commerce_faults or {})}
        # Telemetry is set up from this process's environment when the service starts (as
        # tests/telemetry does it): commerce writes its spans to a file the trace test reads.
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("ACCORD_TRACE_FILE", str(base / "commerce-spans.jsonl"))
            mesh.start("commerce", commerce_env)
        member_env = {
            **env,
            "RISK_CONTRACT": str(contract),
            "RISK_TRUST": f"orchestrator={keys_dir() / 'orchestrator' / JWKS_FILE}",
            "COMMERCE_URL": mesh.url("commerce") + "/mcp",
            "RISK_KEY_FILE": str(base / "risk-ts" / "key.json"),
            "PORT": str(mesh.ports["risk"]),
        }
        log_path = mesh.log_dir / "risk-ts.log"
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                ["node", str(MEMBER / "dist" / "server.js")],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=member_env,
                start_new_session=True,
            )
        member = Service("risk", mesh.ports["risk"], process, log_path)
        try:
            wait_healthy(member.url, process, deadline_s=60)
            mesh.services["risk"] = member
            yield mesh
        finally:
            member.stop()


@pytest.fixture(scope="module")
def ts_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with ts_member_mesh(tmp_path_factory.mktemp("ts-mesh")) as mesh:
        yield mesh


@pytest.fixture(scope="module")
def slow_ts_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    """commerce slowed on orders.customer_history (the member's first call), so that the
    member's child task is still running when the customer cancels."""
    faults = {"ACCORD_FAULTS": f"orders.customer_history=latency:{SLOW_MS}", "ACCORD_DEV": "1"}
    with ts_member_mesh(tmp_path_factory.mktemp("ts-slow"), faults) as mesh:
        yield mesh
        mesh.services["commerce"].kill()  # it holds only the injected delays


def test_the_risk_port_is_served_by_the_typescript_member(ts_mesh: Mesh) -> None:
    card = httpx.get(ts_mesh.url("risk") + "/.well-known/agent-card.json", timeout=10).json()
    assert card["name"] == "risk-check"
    process = ts_mesh.services["risk"].process
    assert isinstance(process, subprocess.Popen)
    assert process.args[0] == "node"


async def test_a_low_risk_refund_is_paid_without_an_approver(ts_mesh: Mesh) -> None:
    # The interop matrix's (Python, TypeScript) cell: the orchestrator's A2A client and the member.
    with interop_matrix.cell(
        "Python",
        "TypeScript",
        client_version=python_version(),
        service_contract=declared_at("risk", ts_mesh.url("risk")).service_contract,
        note="the orchestrator's A2A client to the TypeScript risk-check: a low-risk refund paid "
        "on its assessment",
    ):
        updates: list[TaskView] = []
        done = await ask(ts_mesh, "C-01", "鞋码不合适，想退款，订单 O-1001", updates)
        assert done.status is Status.COMPLETED, done.error
        data = done.data or {}
        assert data["decision"] == "refunded"
        assert data["receipt"]["amount_cents"] == 5999
        risk = [u.status_text for u in updates if u.node == "risk" and ": done" in u.status_text]
        assert risk, [u.status_text for u in updates]
        assert "risk low" in risk[-1]


async def test_a_high_risk_refund_waits_for_the_approver_the_typescript_member_named(
    ts_mesh: Mesh,
) -> None:
    asked = await ask(ts_mesh, "C-03", "I changed my mind about the laptop, refund O-1004")
    assert asked.status is Status.WAITING, asked.error
    assert asked.waiting_reason is WaitingReason.APPROVAL
    decided = await approve(ts_mesh, "approver-7", ("approver",), asked.task_id)
    assert decided.status is Status.COMPLETED, decided.error
    assert (decided.data or {})["outcome"]["result"]["decision"] == "refunded"
    assert ts_mesh.refund_rows().get("O-1004") == 1


async def test_the_damage_claim_is_answered_in_the_same_task(ts_mesh: Mesh) -> None:
    asked = await ask(ts_mesh, "C-01", "my mug arrived broken, order O-1005")
    assert asked.status is Status.WAITING
    assert asked.waiting_reason is WaitingReason.INPUT
    done = await answer(ts_mesh, "C-01", asked, "the handle snapped off, photo IMG_2291.jpg")
    assert done.task_id == asked.task_id
    assert done.status is Status.COMPLETED, done.error
    assert (done.data or {})["decision"] == "refunded"


async def _member_tasks(mesh: Mesh, state: str) -> list[TaskView]:
    """The member's tasks in A2A ``state``, as the orchestrator (their owner) lists them."""
    async with await A2AClient.connect(mesh.url("risk"), token=token(ORCHESTRATOR, "service")) as c:
        views, _ = await c.list_tasks(page_size=100)
    return [v for v in views if v.a2a_state == state]


async def _until_member_task(mesh: Mesh, state: str) -> TaskView:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        found = await _member_tasks(mesh, state)
        if found:
            return found[0]
        await asyncio.sleep(0.05)  # polling a remote agent, bounded by the deadline
    raise TimeoutError(f"no risk-check task in {state}")


async def test_cancel_while_the_checks_run_ends_the_typescript_child_canceled(
    slow_ts_mesh: Mesh,
) -> None:
    first = asyncio.Event()
    updates: list[TaskView] = []

    def seen(view: TaskView) -> None:
        updates.append(view)
        first.set()

    request = asyncio.create_task(
        customer_send(slow_ts_mesh, "C-01", "鞋码不合适，想退款，订单 O-1001", seen)
    )
    await asyncio.wait_for(first.wait(), 60)
    task_id = updates[0].task_id
    child = await _until_member_task(slow_ts_mesh, "TASK_STATE_WORKING")
    async with await customer(slow_ts_mesh, "C-01") as client:
        canceled = await client.cancel(task_id)
    assert canceled.status is Status.FAILED
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    final = await request
    assert final.error is not None
    assert final.error.code is ErrorCode.CANCELED
    async with await A2AClient.connect(
        slow_ts_mesh.url("risk"), token=token(ORCHESTRATOR, "service")
    ) as member:
        end = time.monotonic() + 30
        view = await member.get(child.task_id)
        while view.a2a_state == "TASK_STATE_WORKING" and time.monotonic() < end:
            await asyncio.sleep(0.05)  # the orchestrator cancels its children as it stops
            view = await member.get(child.task_id)
    assert view.a2a_state == "TASK_STATE_CANCELED", view
    assert view.error is not None
    assert view.error.code is ErrorCode.CANCELED
    assert "O-1001" not in slow_ts_mesh.refund_rows()


async def test_a_budget_too_small_for_the_member_pays_nothing(ts_mesh: Mesh) -> None:
    # One tool call: the orchestrator's orders.lookup takes it; the member needs two.
    small = DelegationEnvelope(
        goal="refund",
        budget=Budget(units=50, tool_calls=1, deadline=datetime.now(UTC) + timedelta(minutes=5)),
        tenant=Tenant(app=DEFAULT_APP, user="C-04", session="ts-budget"),
    )
    view = await ask(
        ts_mesh, "C-04", "please refund order O-1006, the speaker is too big", envelope=small
    )
    assert view.status is Status.FAILED, view
    assert view.error is not None
    assert view.error.code is ErrorCode.BUDGET_EXHAUSTED
    assert "O-1006" not in ts_mesh.refund_rows()


async def test_a_call_for_another_tenant_is_refused_through_the_member(ts_mesh: Mesh) -> None:
    """The orchestrator asks about app ``shop``'s customer C-01: the member's tool call carries
    the tenant it was given, and commerce, which acts for app ``accord`` only, refuses it; the
    member's task ends with commerce's code."""
    envelope = DelegationEnvelope(
        goal="refund",
        budget=Budget(units=5, tool_calls=5, deadline=datetime.now(UTC) + timedelta(minutes=5)),
        tenant=Tenant(app="shop", user="C-01", session="ts-tenant"),
    )
    async with await A2AClient.connect(
        ts_mesh.url("risk"), token=token(ORCHESTRATOR, "service")
    ) as member:
        view = await member.send(
            data={"order_id": "O-1001", "customer_id": "C-01"},
            skill="refund.risk",
            envelope=envelope,
        )
    assert view.status is Status.FAILED, view
    assert view.error is not None
    assert view.error.code is ErrorCode.PERMISSION_DENIED
    assert "app" in view.error.message
    # A refused tool call ends the task, not the member (an unawaited read's rejection did).
    assert ts_mesh.services["risk"].process.poll() is None, ts_mesh.services["risk"].log()
    async with httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(ts_mesh.url("risk") + "/healthz")).status_code == 200


async def test_the_members_tool_calls_join_the_requests_trace(ts_mesh: Mesh) -> None:
    """The member passes the trace context it was called with on to commerce (`_meta`
    traceparent): commerce's span of the member's orders.customer_history call is in the same
    trace as its span of the orchestrator's orders.lookup for that request."""
    done = await ask(ts_mesh, "C-04", "please refund order O-1006, the speaker is too big")
    assert done.status in (Status.COMPLETED, Status.WAITING), done.error
    spans_file = ts_mesh.data_dir.parent / "commerce-spans.jsonl"
    end = time.monotonic() + 30
    traces: dict[str, set[str]] = {}
    while time.monotonic() < end:
        lines = spans_file.read_text().splitlines() if spans_file.exists() else []
        traces = {}
        for span in map(json.loads, lines):
            traces.setdefault(span["name"], set()).add(span["trace_id"])
        lookup = traces.get("execute_tool orders.lookup", set())
        history = traces.get("execute_tool orders.customer_history", set())
        if lookup & history:
            return
        await asyncio.sleep(0.1)  # spans are written as they end, bounded by the deadline
    raise AssertionError(f"no request's trace holds both tools' spans: {traces}")


async def test_a_body_the_member_cannot_read_is_a_parse_error(ts_mesh: Mesh) -> None:
    headers = {
        "Authorization": f"Bearer {token(ORCHESTRATOR, 'service')}",
        "Content-Type": "application/json",
    }
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(ts_mesh.url("risk") + "/", content=b"{not json", headers=headers)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == -32700
    assert ts_mesh.services["risk"].process.poll() is None
