"""policy-check and risk-check given only ids look the order up themselves over MCP, so the
orchestrator can run them in parallel with its own lookup (real processes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.protocol.a2a_client.support import envelope, service_env, service_token, token
from tests.support.processes import Service, run_service
from tests.support.tool_servers import run_commerce

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.a2a.client import A2AClient


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Service]]:
    root: Path = tmp_path_factory.mktemp("checks-lookup")
    logs = root / "logs"
    logs.mkdir()
    env = service_env(root / "data")
    with run_commerce(env, logs) as (c, _payments):
        env = {**env, "ACCORD_COMMERCE_URL": c.url}
        with (
            run_service("policy", ["serve", "policy"], env=env, log_dir=logs, deadline_s=90) as p,
            run_service("risk", ["serve", "risk"], env=env, log_dir=logs, deadline_s=90) as r,
        ):
            yield {"commerce": c, "policy": p, "risk": r}


@pytest.mark.parametrize(
    ("order_id", "customer_id", "reason", "eligible", "rule"),
    [
        ("O-1001", "C-01", "wrong_size", True, "within_window"),
        ("O-1002", "C-01", "wrong_size", False, "outside_window"),
        ("O-1003", "C-02", "changed_mind", False, "final_sale"),
    ],
)
async def test_policy_looks_the_order_up_from_ids(
    checks: dict[str, Service],
    order_id: str,
    customer_id: str,
    reason: str,
    eligible: bool,
    rule: str,
) -> None:
    data = {"order_id": order_id, "customer_id": customer_id, "reason": reason}
    async with await A2AClient.connect(checks["policy"].url, token=service_token()) as agent:
        views = [v async for v in agent.stream(data=data, envelope=envelope(customer_id))]
    final = views[-1]
    assert final.status is Status.COMPLETED, final
    assert final.data is not None
    assert final.data["eligible"] is eligible
    assert final.data["rule"] == rule
    assert any(v.node == "orders.lookup" for v in views)


async def test_policy_lookup_of_another_customers_order_is_not_found(
    checks: dict[str, Service],
) -> None:
    data = {"order_id": "O-1004", "customer_id": "C-01", "reason": "wrong_size"}
    async with await A2AClient.connect(checks["policy"].url, token=service_token()) as agent:
        view = await agent.send(data=data, envelope=envelope("C-01"))
    assert view.status is Status.FAILED
    assert view.state.error_code is ErrorCode.NOT_FOUND


async def test_a_customer_cannot_ask_policy_about_another_customer(
    checks: dict[str, Service],
) -> None:
    data = {"order_id": "O-1004", "customer_id": "C-03", "reason": "wrong_size"}
    async with await A2AClient.connect(checks["policy"].url, token=token("C-01")) as agent:
        view = await agent.send(data=data)
    assert view.state.error_code is ErrorCode.PERMISSION_DENIED


async def test_policy_without_facts_or_ids_is_invalid_input(checks: dict[str, Service]) -> None:
    async with await A2AClient.connect(checks["policy"].url, token=service_token()) as agent:
        view = await agent.send(data={"reason": "wrong_size"}, envelope=envelope("C-01"))
    assert view.state.error_code is ErrorCode.INVALID_INPUT


@pytest.mark.parametrize(
    ("order_id", "customer_id", "risk", "signal"),
    [("O-1001", "C-01", "low", None), ("O-1004", "C-03", "high", "large_amount")],
)
async def test_risk_without_an_amount_uses_the_refundable_amount(
    checks: dict[str, Service], order_id: str, customer_id: str, risk: str, signal: str | None
) -> None:
    data = {"order_id": order_id, "customer_id": customer_id}
    async with await A2AClient.connect(checks["risk"].url, token=service_token()) as agent:
        views = [v async for v in agent.stream(data=data, envelope=envelope(customer_id))]
    final = views[-1]
    assert final.status is Status.COMPLETED, final
    assert final.data is not None
    assert final.data["risk"] == risk
    if signal is not None:
        assert signal in final.data["signals"]
    assert any(v.node == "orders.lookup" for v in views)
    # Both reads start together, so one note says so (one task save and streamed event).
    notes = {(v.node, v.status_text) for v in views if v.status is Status.RUNNING and v.node}
    assert notes == {
        (
            "orders.lookup",
            f"looking up order {order_id} and the refund history of customer {customer_id}",
        )
    }
