"""The live refund with the Go policy-check (agents/go/policy-check) in place of the Python one.

Real processes: commerce, payments, risk-check and the orchestrator (`accord serve`), and the Go
member built with the Go toolchain, listening where the orchestrator looks for policy-check
(ACCORD_POLICY_URL) and trusting the orchestrator's JWKS; it signs its orders.lookup calls with its
own key, whose JWKS it publishes and commerce trusts (the orchestrator passes the order's facts,
so only the request that names ids looks an order up).
Asserted here, from the customer's side and at the Go member:

- an automatic refund (O-1001, within the window) is completed by the Go member's decision;
- given ids, the Go member looks the order up over MCP (another customer's order: NOT_FOUND);
- a damage claim (O-1005) waits for the customer's evidence; the answer continues the SAME
  child task at the Go member, which completes `damage_with_evidence`, and the refund is paid;
- a cancel while the request runs (commerce slowed on risk-check's read) ends it CANCELED,
  the Go member's decision standing; a cancel while the Go member's child waits for the
  customer's evidence ends that child CANCELED at the Go member too;
- a budget too small for the request's tree is BUDGET_EXHAUSTED;
- another tenant is refused: another customer does not see the task, and another trusted
  service does not see the orchestrator's child task at the Go member (NOT_FOUND).

Skipped, saying so, only when the `go` command is absent.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from tests.mesh import interop_matrix
from tests.mesh.mesh_support import ROOT, declared_at, python_version
from tests.mesh.support import Mesh, answer, ask, customer, get_task, running_mesh, token
from tests.support.service_keys import TEST_SERVICE, sign_as, write_trust

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import ENVELOPE_META_KEY
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.service_keys import keys_dir

pytestmark = [pytest.mark.go, pytest.mark.timeout(300)]

MEMBER: Final = ROOT / "agents" / "go" / "policy-check"
USUAL_GO: Final = Path("/usr/local/go/bin/go")
ORCHESTRATOR: Final = "svc:orchestrator"
SLOW_MS: Final = 20_000
DEFAULT_APP: Final = "accord"


def _go() -> str:
    found = shutil.which("go") or (str(USUAL_GO) if USUAL_GO.is_file() else None)
    if found is None:
        pytest.skip("go is not installed: the Go member needs the Go toolchain")
    return found


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"the Go policy-check exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # polling a starting process, bounded by the deadline
    raise TimeoutError(f"the Go policy-check did not answer at {url}")


class GoMember:
    """The Go policy-check process, where the orchestrator looks for policy-check."""

    def __init__(self, mesh: Mesh, binary: Path, contract: Path, log: Path) -> None:
        self.mesh, self.binary, self.contract, self.log = mesh, binary, contract, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, commerce_url: str) -> None:
        keys = keys_dir()
        env = {
            **os.environ,
            "PORT": str(self.mesh.ports["policy"]),
            "POLICY_CONTRACT": str(self.contract),
            "POLICY_TRUST": f"orchestrator={keys}/orchestrator/jwks.json,"
            f"{TEST_SERVICE}={keys}/{TEST_SERVICE}/jwks.json",
            "COMMERCE_URL": commerce_url + "/mcp",
            "POLICY_KEY_FILE": str(self.log.with_name("policy-go") / "key.json"),
        }
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [str(self.binary)], env=env, stdout=out, stderr=subprocess.STDOUT
            )
        _wait_healthy(self.mesh.url("policy"), self.process, self.log)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture(scope="module")
def go_member(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GoMember]:
    go = _go()
    base = tmp_path_factory.mktemp("go-refund")
    binary, contract = base / "policy-check", base / "policy-check.json"
    built = subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=MEMBER,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    subprocess.run(
        [sys.executable, str(MEMBER / "scripts" / "export_contract.py"), str(contract)],
        check=True,
        timeout=60,
    )
    with running_mesh(base, services=("payments", "risk")) as mesh:
        sign_as("orchestrator")  # its key ring and JWKS exist before the member reads them
        # commerce trusts the member by the key set it publishes (its own key, made on its first
        # start), as the shipped table trusts the Python policy-check's.
        own_key = {"jwks": mesh.url("policy") + "/.well-known/jwks.json"}
        policy = {"grants": ["orders.lookup"], "tenants": ["*"], **own_key}
        trust = write_trust(base / "trust.yaml", extra={"policy": policy})
        mesh.env["ACCORD_SERVICE_TRUST"] = str(trust)
        member = GoMember(mesh, binary, contract, base / "go.log")
        member.start(mesh.url("commerce"))
        try:
            mesh.start("commerce")
            mesh.start("orchestrator")
            yield member
        finally:
            member.stop()


@pytest.fixture
def go_mesh(go_member: GoMember) -> Mesh:
    return go_member.mesh


async def _children(mesh: Mesh, parent: str, subject: str = ORCHESTRATOR) -> list[TaskView]:
    """The child tasks ``parent`` started at the Go member, as ``subject`` lists them."""
    async with await A2AClient.connect(mesh.url("policy"), token=token(subject, "service")) as c:
        views, _ = await c.list_tasks(page_size=100)
    return [
        v for v in views if (v.metadata.get(ENVELOPE_META_KEY) or {}).get("parent_task") == parent
    ]


async def _until_child(mesh: Mesh, parent: str, *statuses: Status) -> TaskView:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        found = [v for v in await _children(mesh, parent) if v.status in statuses]
        if found:
            return found[0]
        await asyncio.sleep(0.05)  # polling a remote agent, bounded by the deadline
    seen = [(v.task_id, v.status.value) for v in await _children(mesh, parent)]
    raise TimeoutError(f"no Go policy-check child of {parent} in {statuses}: {seen}")


async def test_an_automatic_refund_is_decided_by_the_go_member(go_mesh: Mesh) -> None:
    # The interop matrix's (Python, Go) cell: the orchestrator's A2A client and the Go member.
    with interop_matrix.cell(
        "Python",
        "Go",
        client_version=python_version(),
        service_contract=declared_at("policy", go_mesh.url("policy")).service_contract,
        note="the orchestrator's A2A client to the Go policy-check: an automatic refund decided "
        "by its child task",
    ):
        updates: list[TaskView] = []
        view = await ask(go_mesh, "C-01", "鞋码不合适，想退款，订单 O-1001", updates)
        assert view.status is Status.COMPLETED, view.error
        data: dict[str, Any] = view.data or {}
        assert data["decision"] == "refunded"
        assert data["rule"] == "within_window"
        assert data["receipt"]["amount_cents"] == 5999
        [child] = await _children(go_mesh, view.task_id)
        assert child.status is Status.COMPLETED
        assert (child.data or {})["rule"] == "within_window"
        assert (child.data or {})["params"]["order_id"] == "O-1001"


async def test_given_ids_the_go_member_looks_the_order_up_over_mcp(go_mesh: Mesh) -> None:
    # As the orchestrator would with SEND_ORDER_FACTS off: ids only, for the customer its
    # envelope acts for; the member calls commerce's orders.lookup with its own key.
    envelope = DelegationEnvelope(
        goal="refund policy for O-1002",
        budget=Budget(units=5, tool_calls=5, deadline=datetime.now(UTC) + timedelta(minutes=5)),
        tenant=Tenant(app=DEFAULT_APP, user="C-01", session="go-ids"),
    )
    orchestrator = token(ORCHESTRATOR, "service")
    async with await A2AClient.connect(go_mesh.url("policy"), token=orchestrator) as client:
        decided = await client.send(
            data={"order_id": "O-1002", "customer_id": "C-01", "reason": "wrong_size"},
            skill="refund.policy",
            envelope=envelope,
        )
        # An order that is not the customer's: commerce's NOT_FOUND, read from the tool error.
        other = await client.send(
            data={"order_id": "O-1003", "customer_id": "C-01", "reason": "wrong_size"},
            skill="refund.policy",
            envelope=envelope,
        )
    assert decided.status is Status.COMPLETED, decided.error
    data: dict[str, Any] = decided.data or {}
    assert data["rule"] == "outside_window"
    assert data["params"]["days_since_delivery"] == 60  # from commerce, not the request
    assert other.status is Status.FAILED
    assert other.error is not None
    assert other.error.code is ErrorCode.NOT_FOUND


async def test_a_damage_claim_is_answered_in_the_same_child_task(go_mesh: Mesh) -> None:
    asked = await ask(go_mesh, "C-01", "my mug arrived broken, order O-1005")
    assert asked.status is Status.WAITING, asked.error
    assert asked.waiting_reason is WaitingReason.INPUT
    assert asked.question is not None
    assert "photo" in asked.question
    [waiting] = await _children(go_mesh, asked.task_id)
    assert waiting.status is Status.WAITING
    assert waiting.waiting_reason is WaitingReason.INPUT

    done = await answer(go_mesh, "C-01", asked, "the handle snapped off, photo IMG_2291.jpg")
    assert done.task_id == asked.task_id
    assert done.status is Status.COMPLETED, done.error
    assert (done.data or {})["decision"] == "refunded"
    assert (done.data or {})["rule"] == "damage_with_evidence"
    [child] = await _children(go_mesh, asked.task_id)
    assert child.task_id == waiting.task_id  # the same child task, continued
    assert child.status is Status.COMPLETED
    assert (child.data or {})["rule"] == "damage_with_evidence"


async def test_a_budget_too_small_is_budget_exhausted(go_mesh: Mesh) -> None:
    envelope = DelegationEnvelope(
        goal="refund",
        budget=Budget(units=2, tool_calls=50, deadline=datetime.now(UTC) + timedelta(minutes=5)),
        tenant=Tenant(app=DEFAULT_APP, user="C-01", session="go-budget"),
    )
    view = await ask(go_mesh, "C-01", "refund order O-1001, it does not fit", envelope=envelope)
    assert view.status is Status.FAILED
    assert view.error is not None
    assert view.error.code is ErrorCode.BUDGET_EXHAUSTED
    for child in await _children(go_mesh, view.task_id):  # none ran past its budget
        assert child.status is not Status.COMPLETED


async def test_another_tenant_is_refused(go_mesh: Mesh) -> None:
    view = await ask(go_mesh, "C-01", "I want a refund for O-1002, the shoes do not fit")
    assert view.status is Status.COMPLETED, view.error  # outside the window: nothing is paid
    with pytest.raises(AccordError) as other_customer:
        await get_task(go_mesh, "C-02", view.task_id)
    assert other_customer.value.code is ErrorCode.NOT_FOUND

    [child] = await _children(go_mesh, view.task_id)
    # Another trusted service neither lists nor reads the orchestrator's child task.
    assert await _children(go_mesh, view.task_id, subject=f"svc:{TEST_SERVICE}") == []
    other = token(f"svc:{TEST_SERVICE}", "service")
    async with await A2AClient.connect(go_mesh.url("policy"), token=other) as client:
        with pytest.raises(AccordError) as other_service:
            await client.get(child.task_id)
    assert other_service.value.code is ErrorCode.NOT_FOUND


async def test_a_cancel_while_the_request_runs_ends_it_canceled(go_mesh: Mesh) -> None:
    # commerce slowed on orders.customer_history (risk-check's read), so the request is still
    # running, the Go member's decision in, when the customer cancels.
    slow = {"ACCORD_FAULTS": f"orders.customer_history=latency:{SLOW_MS}", "ACCORD_DEV": "1"}
    go_mesh.services["commerce"].kill()
    go_mesh.start("commerce", slow)
    try:
        first = asyncio.Event()
        updates: list[TaskView] = []

        def seen(view: TaskView) -> None:
            updates.append(view)
            first.set()

        async def send() -> TaskView:
            async with await customer(go_mesh, "C-03") as client:
                return await client.send(
                    text="refund order O-1004 please, I changed my mind",
                    skill="refund.request",
                    on_update=seen,
                )

        request = asyncio.create_task(send())
        await asyncio.wait_for(first.wait(), 60)  # the first streamed update names the task
        task_id = updates[0].task_id
        decided = await _until_child(go_mesh, task_id, Status.COMPLETED)

        async with await customer(go_mesh, "C-03") as client:
            canceled = await client.cancel(task_id)
        assert canceled.status is Status.FAILED
        assert canceled.error is not None
        assert canceled.error.code is ErrorCode.CANCELED
        final = await asyncio.wait_for(request, 60)
        assert final.error is not None
        assert final.error.code is ErrorCode.CANCELED
        read = await get_task(go_mesh, "C-03", task_id)
        assert read.a2a_state == "TASK_STATE_CANCELED"
        [child] = await _children(go_mesh, task_id)  # its decision stands, nothing paid
        assert child.task_id == decided.task_id
        assert child.status is Status.COMPLETED
    finally:
        go_mesh.services["commerce"].kill()  # it holds the injected delays: nothing to drain
        go_mesh.start("commerce")


async def test_a_cancel_while_the_go_child_waits_cancels_it(go_mesh: Mesh) -> None:
    asked = await ask(go_mesh, "C-04", "the speaker from O-1006 arrived broken")
    assert asked.status is Status.WAITING, asked.error
    waiting = await _until_child(go_mesh, asked.task_id, Status.WAITING)

    async with await customer(go_mesh, "C-04") as client:
        canceled = await client.cancel(asked.task_id)
    assert canceled.status is Status.FAILED
    assert canceled.error is not None
    assert canceled.error.code is ErrorCode.CANCELED
    child = await _until_child(go_mesh, asked.task_id, Status.FAILED)
    assert child.task_id == waiting.task_id
    assert child.error is not None
    assert child.error.code is ErrorCode.CANCELED
    assert child.a2a_state == "TASK_STATE_CANCELED"
