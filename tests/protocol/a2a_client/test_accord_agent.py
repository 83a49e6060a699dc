"""The client against an Accord agent (policy-check): codes come from the status metadata and
the error DataPart; cancel, unknown tasks and the envelope round trip."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterator
from typing import Any, cast

import httpx
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


class _Recording(httpx.AsyncBaseTransport):
    """The bytes of every response body, as the client reads them."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bodies: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        body = bytearray()
        self.bodies.append(b"")
        index = len(self.bodies) - 1
        stream = response.stream

        async def tee() -> AsyncIterator[bytes]:
            async for chunk in cast(AsyncIterable[bytes], stream):
                body.extend(chunk)
                self.bodies[index] = bytes(body)
                yield chunk

        return httpx.Response(
            response.status_code, headers=response.headers, stream=_Stream(tee(), stream)
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Stream(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterator[bytes], inner: Any) -> None:
        self.chunks, self.inner = chunks, inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_agent_is_asked_for_no_history(policy: Service, transport: str) -> None:
    """The client reads a task's status and artifacts, never its history (at least the
    message it just sent, echoed back in the stream's first event): it asks for none."""
    recording = _Recording()
    async with (
        httpx.AsyncClient(transport=recording, timeout=30) as http,
        await A2AClient.connect(
            policy.url, token=service_token(), transport=transport, http=http
        ) as agent,
    ):
        view = await agent.send(data=policy_input(), envelope=envelope())
    assert view.status is Status.COMPLETED
    streamed = recording.bodies[-1].decode()
    assert '"status"' in streamed  # the task's events, as read
    assert '"history"' not in streamed
