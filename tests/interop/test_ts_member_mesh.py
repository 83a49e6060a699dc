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

import subprocess
import sys
from collections.abc import Iterator
from typing import Final

import httpx
import pytest
from tests.interop.test_ts_member import MEMBER, _member_ready
from tests.mesh.support import Mesh, answer, approve, ask, running_mesh
from tests.support.processes import Service, wait_healthy
from tests.support.service_keys import sign_as

from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import TaskView
from accord.protocol.service_keys import JWKS_FILE, ensure_ring, keys_dir

pytestmark = [pytest.mark.node, pytest.mark.timeout(300)]

# The tools the member calls, the grants its token asks for (its trust entry allows them).
RISK_TOOLS: Final = ("orders.customer_history", "orders.lookup")


def _build(env: dict[str, str]) -> None:
    for folder in (MEMBER.parents[2] / "contracts" / "ts", MEMBER):
        subprocess.run(
            ["npm", "run", "--silent", "build"], cwd=folder, env=env, check=True, timeout=120
        )


@pytest.fixture(scope="module")
def ts_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    env = _member_ready()
    _build(env)
    base = tmp_path_factory.mktemp("ts-mesh")
    contract = base / "risk-check.json"
    subprocess.run(
        [sys.executable, str(MEMBER / "scripts" / "export_contract.py"), str(contract)],
        env=env,
        check=True,
        timeout=60,
    )
    # The orchestrator's key exists before it starts, so the member can read its JWKS file.
    ensure_ring("orchestrator", keys_dir())
    services = ("commerce", "payments", "policy", "orchestrator")
    with running_mesh(base, services=services) as mesh:
        member_env = {
            **env,
            "RISK_CONTRACT": str(contract),
            "RISK_TRUST": f"orchestrator={keys_dir() / 'orchestrator' / JWKS_FILE}",
            "COMMERCE_URL": mesh.url("commerce") + "/mcp",
            "RISK_SERVICE_TOKEN": sign_as("risk", scopes=RISK_TOOLS, ttl_s=3600),
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


def test_the_risk_port_is_served_by_the_typescript_member(ts_mesh: Mesh) -> None:
    card = httpx.get(ts_mesh.url("risk") + "/.well-known/agent-card.json", timeout=10).json()
    assert card["name"] == "risk-check"
    process = ts_mesh.services["risk"].process
    assert isinstance(process, subprocess.Popen)
    assert process.args[0] == "node"


async def test_a_low_risk_refund_is_paid_without_an_approver(ts_mesh: Mesh) -> None:
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
