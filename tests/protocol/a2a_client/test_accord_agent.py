"""The client against an Accord agent (policy-check): codes come from the status metadata and
the error DataPart; cancel, unknown tasks and the envelope round trip."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import A2AState, Status
from accord.protocol.a2a.client import A2AClient
from tests.protocol.a2a_client.support import (
    TRANSPORTS,
    envelope,
    order,
    policy_input,
    policy_service,
    service_token,
    token,
)
from tests.support.processes import Service


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("client-policy")
    (root / "logs").mkdir()
    with policy_service(root / "data", root / "logs") as svc:
        yield svc


@pytest.fixture(params=TRANSPORTS)
async def agent(request: pytest.FixtureRequest, policy: Service) -> AsyncIterator[A2AClient]:
    async with await A2AClient.connect(
        policy.url, token=service_token(), transport=request.param
    ) as client:
        yield client


async def test_the_card_declares_both_accord_extensions(agent: A2AClient) -> None:
    assert agent.card.accord_contract
    assert agent.card.accord_delegation
    assert agent.binding in ("JSONRPC", "HTTP+JSON")


async def test_a_failed_task_carries_the_code_the_agent_chose(agent: A2AClient) -> None:
    view = await agent.send(data=policy_input(), envelope=envelope(units=0))
    assert view.status is Status.FAILED
    assert view.state.error_code is ErrorCode.BUDGET_EXHAUSTED
    assert view.error is not None
    assert view.error.code is ErrorCode.BUDGET_EXHAUSTED
    assert view.error.details["units"] == 0  # the agent's details survive the trip
    again = await agent.get(view.task_id)
    assert again.error == view.error


async def test_schema_errors_name_the_field(agent: A2AClient) -> None:
    bad = policy_input(order=order(total_cents=-1))
    view = await agent.send(data=bad, envelope=envelope())
    assert view.state.error_code is ErrorCode.INVALID_INPUT
    assert view.error is not None
    assert "total_cents" in view.error.details.get("field", "")


async def test_cancel_a_waiting_task_is_failed_canceled(agent: A2AClient) -> None:
    waiting = await agent.send(data=policy_input("damaged"), envelope=envelope())
    assert waiting.status is Status.WAITING
    canceled = await agent.cancel(waiting.task_id)
    assert (canceled.status, canceled.state.error_code) == (Status.FAILED, ErrorCode.CANCELED)
    assert canceled.a2a_state == A2AState.CANCELED.value
    with pytest.raises(AccordError) as caught:
        await agent.send(text="too late, photo IMG-1", task=waiting)
    assert caught.value.code is ErrorCode.UNSUPPORTED_OPERATION


async def test_unknown_task_is_not_found(agent: A2AClient) -> None:
    with pytest.raises(AccordError) as caught:
        await agent.get("0badc0de-0000-4000-8000-000000000000")
    assert caught.value.code is ErrorCode.NOT_FOUND
    with pytest.raises(AccordError) as canceling:
        await agent.cancel("0badc0de-0000-4000-8000-000000000000")
    assert canceling.value.code is ErrorCode.NOT_FOUND


async def test_a_customer_may_not_act_for_another(policy: Service) -> None:
    async with await A2AClient.connect(policy.url, token=token("C-01")) as agent:
        outcome: ErrorCode | Status
        try:
            view = await agent.send(data=policy_input(), envelope=envelope("C-02"))
            outcome = view.state.error_code or view.status
        except AccordError as error:
            outcome = error.code
    assert outcome is ErrorCode.PERMISSION_DENIED
