"""Client behaviour that needs no agent: error shapes, retry by class, what goes on the wire.

The HTTP peer is an httpx.MockTransport (a stand-in for the network, not for our code)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode, code_for_http_status
from accord.contracts.keys import DELEGATION_EXTENSION_URI, STATUS_META_KEY, TRACEPARENT_KEY
from accord.contracts.retry import RetryPolicy
from accord.contracts.status import ContractState, Status, WaitingReason
from accord.protocol.a2a.client import A2AClient
from accord.protocol.a2a.client.wire import error_from_response
from accord.protocol.a2a.wire import status_meta
from accord.protocol.sent import never_sent
from tests.protocol.a2a_client.support import envelope

CARD = {
    "name": "mock",
    "description": "d",
    "version": "1",
    "supportedInterfaces": [
        {"url": "http://agent.test/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "http://agent.test", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ],
    "capabilities": {"streaming": False, "extensions": [{"uri": DELEGATION_EXTENSION_URI}]},
    "securitySchemes": {
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Custom-Key"}}
    },
    "defaultInputModes": [],
    "defaultOutputModes": [],
    "skills": [],
}

TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}


def mock(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/agent-card.json":
            return httpx.Response(200, json=CARD)
        return handler(request)

    return httpx.AsyncClient(transport=httpx.MockTransport(route))


def rpc_result(request: httpx.Request, result: Any) -> httpx.Response:
    return httpx.Response(
        200, json={"jsonrpc": "2.0", "id": json.loads(request.content)["id"], "result": result}
    )


async def test_envelope_traceparent_auth_and_version_go_on_the_wire() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return rpc_result(request, {"task": TASK})

    env = envelope()
    trace = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    async with await A2AClient.connect(
        "http://agent.test", api_key="k-1", http=mock(handler)
    ) as agent:
        view = await agent.send(data={"x": 1}, envelope=env, traceparent=trace)
    assert view.status is Status.COMPLETED
    request = seen[0]
    assert request.headers["A2A-Version"] == "1.0"
    assert request.headers["X-Custom-Key"] == "k-1"  # the header the card's scheme names
    assert request.headers["traceparent"] == trace
    assert request.headers["A2A-Extensions"] == DELEGATION_EXTENSION_URI
    body = json.loads(request.content)
    assert body["method"] == "SendMessage"
    message = body["params"]["message"]
    assert message["metadata"][TRACEPARENT_KEY] == trace
    assert message["metadata"][DELEGATION_EXTENSION_URI]["tenant"]["user"] == "C-01"
    assert message["extensions"] == [DELEGATION_EXTENSION_URI]
    assert message["role"] == "ROLE_USER"


async def test_a_fresh_traceparent_when_the_caller_has_none() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"task": TASK})

    async with await A2AClient.connect(
        "http://agent.test", token="t", transport="rest", http=mock(handler)
    ) as agent:
        await agent.send(text="hi")
    assert seen[0].url.path == "/message:send"
    assert seen[0].headers["Authorization"] == "Bearer t"
    sent = json.loads(seen[0].content)["message"]["metadata"][TRACEPARENT_KEY]
    assert sent == seen[0].headers["traceparent"]
    assert len(sent.split("-")[1]) == 32


async def test_retryable_answers_are_retried_then_succeed() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) < 3:
            status, body = AccordError(ErrorCode.UNAVAILABLE, "busy").to_rest()
            return httpx.Response(status, json=body)
        return httpx.Response(200, json={"task": TASK})

    policy = RetryPolicy(max_attempts=4, base_delay_ms=1, max_delay_ms=2)
    async with await A2AClient.connect(
        "http://agent.test", transport="rest", retry=policy, http=mock(handler)
    ) as agent:
        view = await agent.send(text="hi")
    assert view.status is Status.COMPLETED
    assert len(calls) == 3


async def test_retry_stops_at_the_attempt_limit_and_stop_errors_are_not_retried() -> None:
    calls: list[ErrorCode] = []
    answer = {"code": ErrorCode.RATE_LIMITED}

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(answer["code"])
        error = AccordError(answer["code"]).to_jsonrpc_error()
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": "1", "error": error})

    policy = RetryPolicy(max_attempts=3, base_delay_ms=1, max_delay_ms=2)
    async with await A2AClient.connect(
        "http://agent.test", retry=policy, http=mock(handler)
    ) as agent:
        with pytest.raises(AccordError) as limited:
            await agent.send(text="hi")
        assert limited.value.code is ErrorCode.RATE_LIMITED
        assert len(calls) == 3
        calls.clear()
        answer["code"] = ErrorCode.PERMISSION_DENIED
        with pytest.raises(AccordError) as denied:
            await agent.get("t1")
        assert denied.value.code is ErrorCode.PERMISSION_DENIED
        assert len(calls) == 1


async def test_a_read_timeout_is_not_resent() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ReadTimeout("slow", request=request)

    async with await A2AClient.connect("http://agent.test", http=mock(handler)) as agent:
        with pytest.raises(AccordError) as caught:
            await agent.send(text="hi")
    assert caught.value.code is ErrorCode.RETRYABLE_TIMEOUT
    assert len(calls) == 1  # the message may have arrived: sending it again could duplicate it


async def test_status_metadata_wins_over_the_a2a_defaults() -> None:
    state = ContractState(status=Status.FAILED, error_code=ErrorCode.OUT_OF_STOCK)
    error = AccordError(ErrorCode.OUT_OF_STOCK, "gone")
    task = {
        **TASK,
        "status": {
            "state": "TASK_STATE_FAILED",
            "message": {
                "messageId": "m",
                "role": "ROLE_AGENT",
                "parts": [{"text": "gone"}],
                "metadata": {STATUS_META_KEY: status_meta(state, error=error, node="stock")},
            },
        },
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return rpc_result(request, task)

    async with await A2AClient.connect("http://agent.test", http=mock(handler)) as agent:
        view = await agent.get("t1")
    assert (view.status, view.state.error_code) == (Status.FAILED, ErrorCode.OUT_OF_STOCK)
    assert view.error == error
    assert view.node == "stock"


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (
            200,
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "x"}},
            ErrorCode.NOT_FOUND,
        ),
        (
            200,
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32052, "message": "x"}},
            ErrorCode.RATE_LIMITED,
        ),
        (*AccordError(ErrorCode.IDEMPOTENCY_CONFLICT).to_rest(), ErrorCode.IDEMPOTENCY_CONFLICT),
        (*AccordError(ErrorCode.UNAUTHENTICATED).to_http(), ErrorCode.UNAUTHENTICATED),
        # a2a-sdk's own REST error for a task that cannot be canceled
        (
            400,
            {
                "error": {
                    "code": 400,
                    "status": "FAILED_PRECONDITION",
                    "message": "no",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "TASK_NOT_CANCELABLE",
                            "domain": "a2a-protocol.org",
                        }
                    ],
                }
            },
            ErrorCode.TASK_NOT_CANCELABLE,
        ),
        (503, None, ErrorCode.UNAVAILABLE),  # a proxy's bare answer
        (404, "not json", ErrorCode.NOT_FOUND),
    ],
)
def test_error_shapes_map_to_contract_codes(status: int, body: Any, code: ErrorCode) -> None:
    if status == 200:
        assert AccordError.from_jsonrpc_error(body["error"]).code is code
    else:
        assert error_from_response(status, body).code is code


async def test_an_unreachable_agent_is_unavailable() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    with pytest.raises(AccordError) as caught:
        await A2AClient.connect("http://agent.test", http=http)
    assert caught.value.code is ErrorCode.UNAVAILABLE


async def test_a_card_without_a_1_0_interface_is_version_unsupported() -> None:
    old = {
        **CARD,
        "supportedInterfaces": [
            {"url": "http://agent.test/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        ],
    }
    http = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, json=old))
    )
    with pytest.raises(AccordError) as caught:
        await A2AClient.connect("http://agent.test", http=http)
    assert caught.value.code is ErrorCode.VERSION_UNSUPPORTED


@pytest.mark.parametrize("status", [400, 409, 422, 429, 500, 502, 503, 504, 507])
@pytest.mark.parametrize("body", [None, "<html>proxy</html>", {"detail": "not ours"}])
def test_a_bare_status_reads_as_the_contract_table_says(status: int, body: Any) -> None:
    assert error_from_response(status, body).code is code_for_http_status(status)


async def test_a_send_that_never_left_says_so_and_one_that_may_have_does_not() -> None:
    """``details["sent"] is False`` only when no attempt reached the agent (a caller may then
    give back what it charged for the call); one answered attempt before is enough to lose it."""
    card = {
        **CARD,
        "supportedInterfaces": [
            {"url": "http://unsent.test", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ],
    }
    attempts: list[str] = []

    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/agent-card.json":
            return httpx.Response(200, json=card)
        if attempts.pop(0) == "refuse":
            raise httpx.ConnectError("refused", request=request)
        status, body = AccordError(ErrorCode.UNAVAILABLE, "busy").to_rest()
        return httpx.Response(status, json=body)

    policy = RetryPolicy(max_attempts=2, base_delay_ms=1, max_delay_ms=2)
    http = httpx.AsyncClient(transport=httpx.MockTransport(route))
    async with await A2AClient.connect(
        "http://unsent.test", transport="rest", retry=policy, http=http
    ) as agent:
        attempts[:] = ["refuse", "refuse"]
        with pytest.raises(AccordError) as never:
            await agent.send(text="hi")
        assert never.value.code is ErrorCode.UNAVAILABLE
        assert never_sent(never.value)
        attempts[:] = ["busy", "refuse"]
        with pytest.raises(AccordError) as maybe:
            await agent.send(text="hi")
        assert maybe.value.code is ErrorCode.UNAVAILABLE
        assert not never_sent(maybe.value)


async def test_an_agent_cannot_claim_its_answer_was_never_sent() -> None:
    """Only the client knows that nothing left it: an error *answer* saying ``sent: false``
    (a hostile or broken agent asking to be free) is read without that claim."""

    def handler(request: httpx.Request) -> httpx.Response:
        error = AccordError(ErrorCode.PERMISSION_DENIED, "no", {"sent": False})
        body = {"jsonrpc": "2.0", "id": "1", "error": error.to_jsonrpc_error()}
        return httpx.Response(200, json=body)

    async with await A2AClient.connect("http://agent.test", http=mock(handler)) as agent:
        with pytest.raises(AccordError) as caught:
            await agent.send(text="hi")
    assert caught.value.code is ErrorCode.PERMISSION_DENIED
    assert not never_sent(caught.value)


async def test_the_tasks_metadata_holds_the_status_and_wins_over_the_message() -> None:
    """An agent of 0.3 writes the current status in the task's metadata; a task whose status
    has no message (A2A 1.0: nothing to say) is read from there, and so is one whose message
    carries another (a 0.2 agent's place, read only when the task's metadata has none)."""
    waiting = ContractState(status=Status.WAITING, waiting_reason=WaitingReason.APPROVAL)
    running = status_meta(ContractState(status=Status.RUNNING), node="old")
    message = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "who approves?"}]}
    tasks = [
        {
            **TASK,
            "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
            "metadata": {STATUS_META_KEY: status_meta(waiting, node="approval")},
        },
        {
            **TASK,
            "status": {
                "state": "TASK_STATE_INPUT_REQUIRED",
                "message": {**message, "metadata": {STATUS_META_KEY: running}},
            },
            "metadata": {STATUS_META_KEY: status_meta(waiting, node="approval")},
        },
    ]
    for task in tasks:

        def handler(request: httpx.Request, task: dict[str, Any] = task) -> httpx.Response:
            return rpc_result(request, task)

        async with await A2AClient.connect("http://agent.test", http=mock(handler)) as agent:
            view = await agent.get("t1")
        assert view.state == waiting
        assert view.node == "approval"
