"""policy-check and risk-check keep one tool client per process: for many turns and readiness
probes, commerce is connected, listed and contract-checked once per service, not per turn.

The real commerce server is served in this process behind a request counter; policy-check and
risk-check are the real services in this process (their lifespans start and close their clients).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from tests.protocol.a2a_client.support import SECRET, envelope, service_token
from tests.support.mcp_requests import CountingApp
from tests.support.processes import free_port

from accord.agents.runner import InProcessMesh
from accord.agents.runner.inprocess import Lifespan
from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient
from accord.protocol.in_process import InProcessServers
from accord.protocol.service import discover_services
from accord.protocol.settings import ServeOptions, service_url

pytestmark = pytest.mark.timeout(120)
TURNS = 4


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ACCORD_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ACCORD_JWT_SECRET", SECRET)
    for name in ("POLICY", "RISK", "COMMERCE", "PAYMENTS", "ORCHESTRATOR"):
        monkeypatch.delenv(f"ACCORD_{name}_URL", raising=False)
    for name in ("ACCORD_TOOLS_CONFIG", "ACCORD_DATABASE_URL", "ACCORD_FAULTS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@asynccontextmanager
async def _counted_commerce(servers: InProcessServers) -> AsyncIterator[tuple[CountingApp, str]]:
    """Commerce served in ``servers`` (where its own client finds payments), counted."""
    url = f"http://127.0.0.1:{free_port()}"
    app = discover_services()["commerce"].build_app(ServeOptions(in_process=servers))
    counted = CountingApp(app)
    async with Lifespan(app, "counted-commerce"):
        stop = servers.serve(url, counted)
        try:
            yield counted, url
        finally:
            stop()


async def _ready(http: httpx.AsyncClient, name: str) -> int:
    return (await http.get(service_url(name) + "/readyz")).status_code


async def test_turns_and_readiness_probes_do_not_reconnect(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Commerce reads refunds from payments (issue 13): payments in this process too, on a port
    # of its own so that no other mesh's payments on the default port is reached.
    monkeypatch.setenv("ACCORD_PAYMENTS_URL", f"http://127.0.0.1:{free_port()}")
    servers = InProcessServers()  # one for both meshes and the counted commerce: all reach all
    async with (
        InProcessMesh(("payments",), servers=servers),
        _counted_commerce(servers) as (counted, commerce_url),
    ):
        monkeypatch.setenv("ACCORD_COMMERCE_URL", commerce_url)
        async with (
            InProcessMesh(("policy", "risk"), servers=servers) as mesh,
            httpx.AsyncClient(transport=mesh.transport(), timeout=60) as http,
        ):
            assert [await _ready(http, "risk") for _ in range(3)] == [200] * 3
            risk = await A2AClient.connect(service_url("risk"), token=service_token(), http=http)
            policy = await A2AClient.connect(
                service_url("policy"), token=service_token(), http=http
            )
            for _ in range(TURNS):
                # Ids only: each agent looks the order up itself (and risk reads the history
                # of its customer beside the lookup, which gives the refundable amount).
                ids = {"order_id": "O-1001", "customer_id": "C-01"}
                scored = await risk.send(data=ids, envelope=envelope())
                checked = await policy.send(
                    data={**ids, "reason": "wrong_size"}, envelope=envelope()
                )
                assert scored.status is Status.COMPLETED, scored
                assert checked.status is Status.COMPLETED, checked
            assert [await _ready(http, "risk") for _ in range(3)] == [200] * 3
    assert counted.counts["tools/call orders.customer_history"] == TURNS
    assert counted.counts["tools/call orders.lookup"] == 2 * TURNS
    # One session per service's client (policy-check's and risk-check's), not one per turn.
    assert counted.counts["tools/list"] == 2, counted.counts


_OLDER_TOOLS = """\
servers:
  - name: commerce
    transport: http
    url: ${service_url:commerce}/mcp
    tools: [orders.lookup, customers.history]
  - name: payments
    transport: http
    url: ${service_url:payments}/mcp
    tools: [refunds.issue, refunds.get, refunds.list]
"""


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # The shipped configuration: the history of the order's customer, one call.
        (None, {"orders.customer_history": 1}),
        # One written before orders.customer_history existed: the two calls of risk-check 1.0.
        (_OLDER_TOOLS, {"orders.lookup": 1, "customers.history": 1}),
    ],
)
async def test_a_risk_check_with_its_amount_makes_the_calls_its_configuration_allows(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    config: str | None,
    expected: dict[str, int],
) -> None:
    monkeypatch.setenv("ACCORD_PAYMENTS_URL", f"http://127.0.0.1:{free_port()}")
    if config is not None:
        (data_dir / "tools.yaml").write_text(config)
        monkeypatch.setenv("ACCORD_TOOLS_CONFIG", str(data_dir / "tools.yaml"))
    servers = InProcessServers()  # one for both meshes and the counted commerce: all reach all
    async with (
        InProcessMesh(("payments",), servers=servers),
        _counted_commerce(servers) as (counted, commerce_url),
    ):
        monkeypatch.setenv("ACCORD_COMMERCE_URL", commerce_url)
        async with (
            InProcessMesh(("risk",), servers=servers) as mesh,
            httpx.AsyncClient(transport=mesh.transport(), timeout=60) as http,
        ):
            risk = await A2AClient.connect(service_url("risk"), token=service_token(), http=http)
            data = {"order_id": "O-1006", "customer_id": "C-04", "amount_cents": 1200}
            scored = await risk.send(data=data, envelope=envelope("C-04"))
            theirs = await risk.send(data={**data, "order_id": "O-1001"}, envelope=envelope("C-04"))
    assert scored.status is Status.COMPLETED, scored
    assert (scored.data or {})["signals"] == ["frequent_refunds"]  # C-04's five refunds
    # Another customer's order is NOT_FOUND on either path: no verdict on it.
    assert theirs.status is Status.FAILED
    assert theirs.error is not None
    assert theirs.error.code is ErrorCode.NOT_FOUND
    calls = {
        k.removeprefix("tools/call "): v
        for k, v in counted.counts.items()
        if k.startswith("tools/call ")
    }
    assert calls == {tool: 2 * n for tool, n in expected.items()}, calls
