"""`accord stats` against a real orchestrator process (GET /stats, authenticated)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.agents.runner.conftest import SECRET
from tests.support.processes import Service, free_port, run_service
from tests.support.service_keys import TEST_SERVICE, sign_as
from typer.testing import CliRunner

from accord.agents.cli.refund_cmd import EXIT_CALL_FAILED
from accord.cli.main import app
from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient
from accord.protocol.auth import mint_token

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def orchestrator(data_dir: Path) -> Iterator[Service]:
    """The orchestrator alone: intake (the model) runs before any check needs the others."""
    logs = data_dir / "logs"
    logs.mkdir()
    env = {
        "ACCORD_DATA_DIR": str(data_dir),
        "ACCORD_JWT_SECRET": SECRET,
        **{f"ACCORD_{n}_URL": f"http://127.0.0.1:{free_port()}" for n in ("POLICY", "RISK")},
        **{f"ACCORD_{n}_URL": f"http://127.0.0.1:{free_port()}" for n in ("COMMERCE", "PAYMENTS")},
    }
    with run_service(
        "orchestrator", ["serve", "orchestrator"], env=env, log_dir=logs, deadline_s=120.0
    ) as service:
        yield service


async def stats(url: str, token: str, *extra: str) -> tuple[int, str]:
    """The real command (it runs its own event loop, so on a thread of its own)."""

    def invoke() -> tuple[int, str]:
        result = CliRunner().invoke(app, ["stats", "--url", url, "--token", token, *extra])
        return result.exit_code, result.output

    return await asyncio.to_thread(invoke)


async def test_accord_stats_prints_the_running_orchestrators_metrics(
    orchestrator: Service,
) -> None:
    url = orchestrator.url
    customer = mint_token("C-01", ["customer"], secret=SECRET)
    approver = mint_token("approver-1", ["approver"], secret=SECRET)
    service = sign_as(TEST_SERVICE)

    empty = json.loads((await stats(url, approver, "--json"))[1])
    assert empty["models"]["samples"] == 0

    async with await A2AClient.connect(url, token=customer) as client:
        asked = await client.send(
            text="I want a refund, the running shoes do not fit", skill="refund.request"
        )
    assert asked.status is Status.WAITING  # intake (one model run) asks for the order number

    code, out = await stats(url, service, "--json")
    assert code == 0, out
    models = json.loads(out)["models"]
    assert models["samples"] == 1
    assert models["success_rate"] == 1.0
    assert (models["total_units"], models["total_calls"]) == (1, 1)
    assert models["p95_latency_ms"] is not None
    assert models["window"]["first"] is not None
    rows = {(r["route"], r["status"]): r["samples"] for r in models["by_route_status"]}
    assert rows == {("fast", "completed"): 1}

    code, table = await stats(url, approver)
    assert code == 0, table
    for shown in ("samples", "success", "P95", "100.0%", "fast", "completed"):
        assert shown in table

    code, denied = await stats(url, customer)
    assert code == EXIT_CALL_FAILED
    assert ErrorCode.PERMISSION_DENIED.value in denied
    async with httpx.AsyncClient() as http:
        anonymous = await http.get(f"{url}/stats", headers={"A2A-Version": "1.0"})
    assert anonymous.status_code == 401
