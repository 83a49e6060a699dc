"""policy-check end to end: a real `accord serve policy` process, our A2A client, both bindings."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
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

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import A2AState, Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("policy")
    logs = root / "logs"
    logs.mkdir()
    with policy_service(root / "data", logs) as svc:
        yield svc


@pytest.fixture(params=TRANSPORTS)
async def agent(request: pytest.FixtureRequest, policy: Service) -> AsyncIterator[A2AClient]:
    async with await A2AClient.connect(
        policy.url, token=token("C-01"), transport=request.param
    ) as client:
        yield client


def completed(view: TaskView) -> dict[str, Any]:
    assert view.status is Status.COMPLETED, view
    assert view.data is not None
    return view.data


RULE_CASES = [
    ("within_window", policy_input(), True, 5999),
    (
        "not_delivered",
        policy_input(order=order(status="shipped", days_since_delivery=None)),
        False,
        0,
    ),
    ("final_sale", policy_input(order=order(final_sale=True)), False, 0),
    ("outside_window", policy_input(order=order(days_since_delivery=60)), False, 0),
    (
        "already_refunded",
        policy_input(order=order(refunded_cents=5999, refundable_cents=0)),
        False,
        0,
    ),
    (
        "amount_exceeds_refundable",
        policy_input(order=order(refunded_cents=1999, refundable_cents=4000), requested_cents=5999),
        True,
        4000,
    ),
    (
        "damage_with_evidence",
        policy_input("damaged", evidence="cracked lid, photo IMG-7"),
        True,
        5999,
    ),
]


@pytest.mark.parametrize(
    ("rule", "data", "eligible", "max_cents"), RULE_CASES, ids=[c[0] for c in RULE_CASES]
)
async def test_each_rule(
    agent: A2AClient, rule: str, data: dict[str, Any], eligible: bool, max_cents: int
) -> None:
    answer = completed(await agent.send(data=data))
    assert answer["rule"] == rule
    assert answer["eligible"] is eligible
    assert answer["max_refund_cents"] == max_cents
    assert isinstance(answer["max_refund_cents"], int)
    assert answer["explanation"]


async def test_damage_claim_waits_for_input_and_completes_in_the_same_task(
    agent: A2AClient,
) -> None:
    first = await agent.send(data=policy_input("damaged"))
    assert first.status is Status.WAITING
    assert first.waiting_reason is WaitingReason.INPUT
    assert first.a2a_state == A2AState.INPUT_REQUIRED.value
    assert first.question is not None
    assert "photo" in first.question
    answer = await agent.send(text="the handle snapped off, photo IMG-2291", task=first)
    assert answer.task_id == first.task_id
    assert answer.context_id == first.context_id
    assert completed(answer)["rule"] == "damage_with_evidence"
    fetched = await agent.get(first.task_id)
    assert fetched.status is Status.COMPLETED
    assert fetched.data == answer.data


async def test_evidence_may_come_as_data_and_by_task_id_alone(agent: A2AClient) -> None:
    first = await agent.send(data=policy_input("damaged"))
    # Only the task id: the client looks the context up itself.
    answer = await agent.send(data={"evidence": "dent on the left side, IMG-3"}, task=first.task_id)
    assert answer.task_id == first.task_id
    assert completed(answer)["eligible"] is True


async def test_a_blank_answer_asks_again(agent: A2AClient) -> None:
    first = await agent.send(data=policy_input("damaged"))
    again = await agent.send(text="  ", task=first)
    assert again.status is Status.WAITING
    assert again.task_id == first.task_id


async def test_streaming_shows_each_step(agent: A2AClient) -> None:
    seen = [v async for v in agent.stream(data=policy_input())]
    statuses = [v.status for v in seen]
    assert statuses[-1] is Status.COMPLETED
    assert Status.RUNNING in statuses
    assert any(v.node == "policy" for v in seen)


async def test_non_streaming_send_gives_the_same_answer(agent: A2AClient) -> None:
    view = await agent.send(data=policy_input(), streaming=False)
    assert completed(view)["rule"] == "within_window"


async def test_input_outside_the_schema_fails_the_task_with_invalid_input(
    agent: A2AClient,
) -> None:
    view = await agent.send(data={"order": order(), "reason": "because"})
    assert view.status is Status.FAILED
    assert view.state.error_code is ErrorCode.INVALID_INPUT
    assert view.error is not None
    assert view.error.code is ErrorCode.INVALID_INPUT


async def test_a_service_must_send_an_envelope_and_may_act_on_behalf(policy: Service) -> None:
    async with await A2AClient.connect(policy.url, token=service_token()) as agent:
        # The gate refuses the call itself: no task is created for it.
        with pytest.raises(AccordError) as caught:
            await agent.send(data=policy_input())
        assert caught.value.code is ErrorCode.INVALID_INPUT
        ok = await agent.send(data=policy_input(), envelope=envelope("C-02"))
        assert completed(ok)["rule"] == "within_window"


async def test_a_spent_budget_fails_with_budget_exhausted(policy: Service) -> None:
    async with await A2AClient.connect(policy.url, token=service_token()) as agent:
        view = await agent.send(data=policy_input(), envelope=envelope(units=0))
    assert view.state.error_code is ErrorCode.BUDGET_EXHAUSTED


async def test_without_a_credential_the_call_is_unauthenticated(policy: Service) -> None:
    async with await A2AClient.connect(policy.url) as agent:
        with pytest.raises(AccordError) as caught:
            await agent.send(data=policy_input())
    assert caught.value.code is ErrorCode.UNAUTHENTICATED


async def test_another_customer_cannot_see_the_task(agent: A2AClient, policy: Service) -> None:
    mine = await agent.send(data=policy_input())
    async with await A2AClient.connect(policy.url, token=token("C-02"), transport="rest") as other:
        with pytest.raises(AccordError) as caught:
            await other.get(mine.task_id)
    assert caught.value.code is ErrorCode.NOT_FOUND
