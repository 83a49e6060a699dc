"""The client against an A2A agent that is not Accord: every answer maps by the defaults."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import A2AState, Status, WaitingReason
from accord.protocol.a2a.client import A2AClient
from tests.protocol.a2a_client.support import TRANSPORTS
from tests.support.processes import free_port, wait_healthy


@pytest.fixture(scope="module")
def foreign_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("foreign") / "agent.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.protocol.a2a_client.foreign_agent", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, deadline_s=90)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(params=TRANSPORTS)
async def agent(request: pytest.FixtureRequest, foreign_url: str) -> AsyncIterator[A2AClient]:
    async with await A2AClient.connect(foreign_url, transport=request.param) as client:
        yield client


async def test_the_card_has_no_accord_extensions(agent: A2AClient) -> None:
    assert agent.card.name == "foreign"
    assert not agent.card.accord_contract
    assert not agent.card.accord_delegation


async def test_completed_with_text_and_data(agent: A2AClient) -> None:
    view = await agent.send(text="hello")
    assert view.status is Status.COMPLETED
    assert view.data == {"greeting": "hi", "n": 3}
    assert isinstance(view.data["n"], int)  # protobuf doubles come back whole
    assert view.text == "hi there"
    assert view.error is None


async def test_failed_without_a_code_is_internal_with_the_peer_text(agent: A2AClient) -> None:
    view = await agent.send(text="fail")
    assert view.status is Status.FAILED
    assert view.state.error_code is ErrorCode.INTERNAL
    assert view.error is not None
    assert view.error.message == "the printer is on fire"


async def test_rejected_is_failed_declined_policy_denied(agent: A2AClient) -> None:
    """A foreign agent's REJECTED without Accord metadata: failed and declined, terminal, the
    default code (``declined`` keeps the agent's decision apart from a fault)."""
    view = await agent.send(text="reject")
    assert (view.status, view.state.error_code) == (Status.FAILED, ErrorCode.POLICY_DENIED)
    assert view.declined
    assert view.is_terminal


async def test_input_required_waits_for_input_and_continues_in_the_same_task(
    agent: A2AClient,
) -> None:
    first = await agent.send(text="ask")
    assert (first.status, first.waiting_reason) == (Status.WAITING, WaitingReason.INPUT)
    assert first.question == "which colour?"
    answer = await agent.send(text="blue", task=first)
    assert answer.task_id == first.task_id
    assert answer.status is Status.COMPLETED
    assert answer.text == "you said blue"


async def test_auth_required_waits_for_auth(agent: A2AClient) -> None:
    view = await agent.send(text="auth")
    assert (view.status, view.waiting_reason) == (Status.WAITING, WaitingReason.AUTH)


async def test_cancel_a_running_task_is_failed_canceled(agent: A2AClient) -> None:
    running = None
    async for view in agent.stream(text="slow"):
        if view.status is Status.RUNNING:
            running = view
            break
    assert running is not None
    canceled = await agent.cancel(running.task_id)
    assert (canceled.status, canceled.state.error_code) == (Status.FAILED, ErrorCode.CANCELED)
    assert canceled.a2a_state == A2AState.CANCELED.value
    later = await agent.get(running.task_id)
    assert later.state.error_code is ErrorCode.CANCELED


async def test_unknown_task_is_not_found(agent: A2AClient) -> None:
    for call in (agent.get, agent.cancel):
        with pytest.raises(AccordError) as caught:
            await call("no-such-task")
        assert caught.value.code is ErrorCode.NOT_FOUND


async def test_a_finished_task_cannot_be_canceled_or_continued(agent: A2AClient) -> None:
    done = await agent.send(text="hello")
    with pytest.raises(AccordError) as caught:
        await agent.cancel(done.task_id)
    assert caught.value.code is ErrorCode.TASK_NOT_CANCELABLE
    with pytest.raises(AccordError) as again:
        await agent.send(text="hello", task=done)
    assert again.value.code is ErrorCode.UNSUPPORTED_OPERATION


async def test_the_callers_deadline_gives_retryable_timeout(agent: A2AClient) -> None:
    with pytest.raises(AccordError) as caught:
        await agent.send(text="slow", deadline_s=0.5)
    assert caught.value.code is ErrorCode.RETRYABLE_TIMEOUT
    await asyncio.sleep(0)  # the remote task is left running: not the caller's to decide here
