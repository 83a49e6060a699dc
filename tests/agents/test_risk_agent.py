"""risk-check end to end: real `accord serve commerce` and `accord serve risk` processes, the
customer history read over MCP, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.protocol.a2a_client.support import envelope, service_env, service_token, token
from tests.support import postgres
from tests.support.processes import Service, free_port, run_service
from tests.support.tool_servers import run_commerce

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient, TaskView


def _serve(root: Path, database_url: str) -> Iterator[tuple[Service, Service]]:
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    env = service_env(root / "data", ACCORD_DATABASE_URL=database_url)
    with run_commerce(env, logs) as (commerce, _payments):
        risk_env = {**env, "ACCORD_COMMERCE_URL": commerce.url}
        with run_service(
            "risk", ["serve", "risk"], env=risk_env, log_dir=logs, deadline_s=90
        ) as risk:
            yield commerce, risk


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def mesh(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Service]]:
    url = ""
    if request.param == "postgres":
        url = postgres.fresh_database(request.getfixturevalue("postgres_server_url"))
    yield from _serve(tmp_path_factory.mktemp(f"risk-{request.param}"), url)


@pytest.fixture
async def agent(mesh: tuple[Service, Service]) -> AsyncIterator[A2AClient]:
    async with await A2AClient.connect(mesh[1].url, token=service_token()) as client:
        yield client


async def check(agent: A2AClient, order_id: str, customer_id: str, amount: int) -> TaskView:
    data = {"order_id": order_id, "customer_id": customer_id, "amount_cents": amount}
    return await agent.send(data=data, envelope=envelope(customer_id))


def answer(view: TaskView) -> dict[str, Any]:
    assert view.status is Status.COMPLETED, view
    assert view.data is not None
    return view.data


async def test_small_refund_of_a_good_customer_is_low(agent: A2AClient) -> None:
    result = answer(await check(agent, "O-1001", "C-01", 5999))
    assert result["risk"] == "low"
    assert result["signals"] == []
    assert 0 <= result["score"] < 0.5


async def test_large_amount_is_high(agent: A2AClient) -> None:
    result = answer(await check(agent, "O-1004", "C-03", 129900))
    assert result["risk"] == "high"
    assert "large_amount" in result["signals"]


async def test_many_recent_refunds_are_high(agent: A2AClient) -> None:
    result = answer(await check(agent, "O-1006", "C-04", 12000))
    assert result["risk"] == "high"
    assert result["signals"] == ["frequent_refunds"]


async def test_the_history_step_is_visible(agent: A2AClient) -> None:
    """With the amount named, the history of the order's customer is one read (the order's
    proof and the history in one tool call), under one progress note."""
    data = {"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 100}
    views = [v async for v in agent.stream(data=data, envelope=envelope())]
    reads = [v for v in views if v.node == "orders.customer_history"]
    assert reads, [(v.node, v.status_text) for v in views]
    assert "refund history of customer C-01 for order O-1001" in reads[0].status_text
    assert not [v for v in views if v.node == "orders.lookup"]
    assert views[-1].status is Status.COMPLETED


async def test_an_unknown_customer_fails_with_the_tools_code(agent: A2AClient) -> None:
    view = await check(agent, "O-1001", "C-99", 100)
    assert view.status is Status.FAILED
    assert view.state.error_code is ErrorCode.NOT_FOUND


async def test_a_customer_may_only_check_their_own_refunds(mesh: tuple[Service, Service]) -> None:
    async with await A2AClient.connect(mesh[1].url, token=token("C-01")) as agent:
        own = await agent.send(
            data={"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 100}
        )
        other = await agent.send(
            data={"order_id": "O-1004", "customer_id": "C-03", "amount_cents": 100}
        )
    assert answer(own)["risk"] == "low"
    assert other.state.error_code is ErrorCode.PERMISSION_DENIED


def test_ready_while_commerce_is_up(mesh: tuple[Service, Service]) -> None:
    assert httpx.get(mesh[1].url + "/readyz", timeout=30).status_code == 200


@pytest.fixture(scope="module")
def risk_alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("risk-alone")
    (root / "logs").mkdir()
    nobody = f"http://127.0.0.1:{free_port()}"
    env = {**service_env(root / "data"), "ACCORD_COMMERCE_URL": nobody}
    with run_service(
        "risk", ["serve", "risk"], env=env, log_dir=root / "logs", deadline_s=90
    ) as risk:
        yield risk


async def test_commerce_down_fails_unavailable_and_not_ready(risk_alone: Service) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        assert (await http.get(risk_alone.url + "/readyz")).status_code == 503
    async with await A2AClient.connect(risk_alone.url, token=service_token()) as agent:
        view = await check(agent, "O-1001", "C-01", 5999)
    assert view.status is Status.FAILED
    assert view.state.error_code is ErrorCode.UNAVAILABLE
    assert view.error is not None
    assert view.error.retry_class.value == "retry"


async def test_input_outside_the_schema_is_invalid_input(risk_alone: Service) -> None:
    async with await A2AClient.connect(risk_alone.url, token=service_token()) as agent:
        view = await agent.send(
            data={"order_id": "1001", "customer_id": "C-01", "amount_cents": 5}, envelope=envelope()
        )
    assert view.state.error_code is ErrorCode.INVALID_INPUT
    assert view.error is not None
    assert view.error.details["field"] == "order_id"
