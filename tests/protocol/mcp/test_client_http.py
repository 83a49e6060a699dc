"""ToolClient against the fault-injecting test servers over Streamable HTTP (real process)."""

from __future__ import annotations

import time
import uuid

import anyio
import pytest
from mcp_types.version import LATEST_MODERN_VERSION

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import RetryPolicy
from accord.contracts.tools import tool_contract
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import ServerSpec
from accord.protocol.mcp.contract_check import FindingKind
from accord.protocol.sent import never_sent
from tests.protocol.mcp.support import FAST_RETRY, FakeServers, contracts, http_spec
from tests.support.processes import free_port

LOOKUP = {"order_id": "O-1001", "customer_id": "C-01"}
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def _order_id(first_digit: int = 1) -> str:
    """A fresh order number; the flaky server fails as many times as its first digit says."""
    return f"O-{first_digit}{uuid.uuid4().int % 10**8:08d}"


async def test_call_returns_validated_structured_output(fake_servers: FakeServers) -> None:
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        out = await tools.call("orders.lookup", LOOKUP)
    assert out["order_id"] == "O-1001"
    assert out["total_cents"] == 4999
    assert isinstance(out["total_cents"], int)
    assert out["items"][0]["sku"] == "SKU-1"


async def test_traceparent_arrives_in_params_meta(fake_servers: FakeServers) -> None:
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        with_trace = await tools.call("debug.echo", {"text": "a"}, traceparent=TRACEPARENT)
        without = await tools.call("debug.echo", {"text": "b"})
    assert with_trace == {"text": "a", "traceparent": TRACEPARENT}
    assert without == {"text": "b", "traceparent": None}


async def test_contract_error_from_meta_is_raised_and_not_retried(
    fake_servers: FakeServers,
) -> None:
    order_id = "O-0404" + str(uuid.uuid4().int % 10**4).zfill(4)
    async with ToolClient.for_servers([http_spec(fake_servers, "good")], retry=FAST_RETRY) as t:
        with pytest.raises(AccordError) as info:
            await t.call("orders.lookup", {"order_id": order_id, "customer_id": "C-01"})
    assert info.value.code is ErrorCode.NOT_FOUND
    assert info.value.message == "no such order for this customer"
    assert fake_servers.calls("good", "orders.lookup", order_id) == 1  # stop class: one attempt
    assert not never_sent(info.value)  # the server answered: the call was made


async def test_write_without_key_is_refused_before_sending(fake_servers: FakeServers) -> None:
    key = f"refund:{uuid.uuid4().hex[:12]}"
    args = {"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 500, "reason": "broken"}
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        with pytest.raises(AccordError) as info:
            await tools.call("refunds.issue", args)
        assert info.value.code is ErrorCode.INVALID_INPUT
        assert "idempotency key" in info.value.message
        assert fake_servers.calls("good", "refunds.issue", "") == 0  # nothing reached the server

        issued = await tools.call("refunds.issue", args, idempotency_key=key)
        assert issued["receipt"]["idempotency_key"] == key
        assert issued["replayed"] is False
        again = await tools.call("refunds.issue", {**args, "idempotency_key": key})
        assert again["replayed"] is True
        found = await tools.call("refunds.get", {"idempotency_key": key, "customer_id": "C-01"})
    assert found["found"] is True


async def test_two_different_keys_are_refused(fake_servers: FakeServers) -> None:
    args = {
        "order_id": "O-1001",
        "customer_id": "C-01",
        "amount_cents": 5,
        "reason": "x",
        "idempotency_key": "refund:a",
    }
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        with pytest.raises(AccordError) as info:
            await tools.call("refunds.issue", args, idempotency_key="refund:b")
    assert info.value.code is ErrorCode.INVALID_INPUT


async def test_arguments_outside_input_schema_are_refused(fake_servers: FakeServers) -> None:
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        with pytest.raises(AccordError) as info:
            await tools.call("orders.lookup", {"order_id": "1001", "customer_id": "C-01"})
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert info.value.details["where"] == "/order_id"
    assert fake_servers.calls("good", "orders.lookup", "1001") == 0


async def test_unknown_tool_is_not_found(fake_servers: FakeServers) -> None:
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        with pytest.raises(AccordError) as info:
            await tools.call("misc.ping", {})  # listed by the server, but has no contract here
    assert info.value.code is ErrorCode.NOT_FOUND


@pytest.mark.parametrize(
    ("scenario", "kind", "tool", "where"),
    [
        ("annotation", FindingKind.ANNOTATION, "orders.lookup", "readOnlyHint"),
        ("missing", FindingKind.MISSING_TOOL, "refunds.issue", ""),
        ("input_schema", FindingKind.INPUT_SCHEMA, "orders.lookup", "/additionalProperties"),
    ],
)
async def test_contract_check_at_connect(
    fake_servers: FakeServers, scenario: str, kind: FindingKind, tool: str, where: str
) -> None:
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([http_spec(fake_servers, scenario)]):
            pytest.fail("a server that breaks its contract must not be usable")
    err = info.value
    assert err.code is ErrorCode.CONTRACT_VIOLATION
    assert err.details["server"] == scenario
    [finding] = err.details["findings"]
    assert (finding["kind"], finding["tool"], finding["where"]) == (kind.value, tool, where)
    assert tool in err.message


async def test_output_outside_schema_is_a_contract_violation(fake_servers: FakeServers) -> None:
    async with ToolClient.for_servers(
        [http_spec(fake_servers, "bad_output")], retry=FAST_RETRY
    ) as tools:
        with pytest.raises(AccordError) as info:
            await tools.call("orders.lookup", LOOKUP)
    assert info.value.code is ErrorCode.CONTRACT_VIOLATION
    assert info.value.details["tool"] == "orders.lookup"


async def test_retryable_error_is_retried_until_success(fake_servers: FakeServers) -> None:
    order_id = _order_id(first_digit=2)
    async with ToolClient.for_servers(
        [http_spec(fake_servers, "flaky")], retry=FAST_RETRY
    ) as tools:
        out = await tools.call("orders.lookup", {"order_id": order_id, "customer_id": "C-01"})
    assert out["order_id"] == order_id
    assert fake_servers.calls("flaky", "orders.lookup", order_id) == 3


async def test_retries_stop_at_max_attempts(fake_servers: FakeServers) -> None:
    order_id = _order_id(first_digit=9)
    policy = RetryPolicy(max_attempts=3, base_delay_ms=1, max_delay_ms=5)
    async with ToolClient.for_servers([http_spec(fake_servers, "flaky")], retry=policy) as t:
        with pytest.raises(AccordError) as info:
            await t.call("orders.lookup", {"order_id": order_id, "customer_id": "C-01"})
    assert info.value.code is ErrorCode.RETRYABLE_TIMEOUT
    assert fake_servers.calls("flaky", "orders.lookup", order_id) == 3


async def test_slow_tool_times_out_per_attempt(fake_servers: FakeServers) -> None:
    policy = RetryPolicy(max_attempts=2, base_delay_ms=1, max_delay_ms=5)
    order_id = _order_id()
    async with ToolClient.for_servers(
        [http_spec(fake_servers, "slow")], timeout_s=0.3, retry=policy
    ) as tools:
        started = time.monotonic()
        with pytest.raises(AccordError) as info:
            await tools.call("orders.lookup", {"order_id": order_id, "customer_id": "C-01"})
        elapsed = time.monotonic() - started
        # The session survives a timed-out call: a fast tool on it still answers.
        echo = await tools.call("debug.echo", {"text": "still here"}, timeout_s=10)
        assert echo["text"] == "still here"
    assert info.value.code is ErrorCode.RETRYABLE_TIMEOUT
    assert not never_sent(info.value)  # sent, then not answered in time: it may have been done
    assert 0.6 <= elapsed < 4.5  # two attempts of 0.3 s; one server sleep alone is 5 s
    # Never more than the two attempts; on a loaded machine the second one can time out
    # before its request reaches the server's handler, so the server may have seen one.
    assert 1 <= fake_servers.calls("slow", "orders.lookup", order_id) <= 2


async def test_concurrent_calls_share_one_session(fake_servers: FakeServers) -> None:
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        results: dict[int, str] = {}

        async def one(i: int) -> None:
            results[i] = (await tools.call("debug.echo", {"text": f"n{i}"}))["text"]

        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(one, i)
    assert results == {i: f"n{i}" for i in range(40)}


async def test_connection_refused_is_unavailable() -> None:
    spec = ServerSpec.http("down", f"http://127.0.0.1:{free_port()}/mcp", contracts())
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([spec]):
            pass
    assert info.value.code is ErrorCode.UNAVAILABLE
    assert info.value.details["server"] == "down"


async def test_http_5xx_is_unavailable(fake_servers: FakeServers) -> None:
    spec = ServerSpec.http("broken", fake_servers.url("http503"), contracts())
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([spec]):
            pass
    assert info.value.code is ErrorCode.UNAVAILABLE
    assert info.value.details["http_status"] == 503


async def test_wrong_path_is_not_found(fake_servers: FakeServers) -> None:
    spec = ServerSpec.http("lost", fake_servers.url("no-such-scenario"), contracts())
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([spec]):
            pass
    assert info.value.code is ErrorCode.NOT_FOUND


async def test_first_failing_server_in_order_is_reported(fake_servers: FakeServers) -> None:
    good = http_spec(fake_servers, "good")
    bad = ServerSpec.http(
        "annotation",
        fake_servers.url("annotation"),
        [c for c in contracts() if c.name == "orders.lookup"],
    )
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([good, bad]):
            pass
    # good already serves orders.lookup in this setup, so only the violation matters here
    assert info.value.code is ErrorCode.CONTRACT_VIOLATION
    assert info.value.details["server"] == "annotation"


async def test_a_tool_of_another_major_only_is_version_unsupported_naming_both(
    fake_servers: FakeServers,
) -> None:
    built = tool_contract("orders.lookup").version
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([http_spec(fake_servers, "major_ahead")]):
            pytest.fail("a tool serving only another major must not be usable")
    err = info.value
    assert err.code is ErrorCode.VERSION_UNSUPPORTED
    assert err.details == {
        "peer": "orders.lookup",
        "expected": built,
        "served": ["2.0.0"],
        "server": "major_ahead",
    }
    assert "2.0.0" in err.message
    assert built in err.message
    assert fake_servers.calls("major_ahead", "orders.lookup", "O-1001") == 0


async def test_a_tool_serving_our_major_too_is_used(fake_servers: FakeServers) -> None:
    async with ToolClient.for_servers([http_spec(fake_servers, "both_majors")]) as tools:
        found = await tools.call("orders.lookup", LOOKUP)
    assert found["order_id"] == LOOKUP["order_id"]


@pytest.mark.parametrize("where", ["O-0503", "O-0504"], ids=["tool_result", "jsonrpc_error"])
async def test_a_tool_server_cannot_claim_its_answer_was_never_sent(
    fake_servers: FakeServers, where: str
) -> None:
    """A server that answered was sent to, whatever its error says: ``sent: false`` in a tool
    error, or in a JSON-RPC error, is dropped (a caller would otherwise give back what the call
    cost). The client's own JSON-RPC answer for a refused connection keeps it (the tests of a
    server that is down)."""
    order_id = where + str(uuid.uuid4().int % 10**4).zfill(4)
    policy = RetryPolicy(max_attempts=1, base_delay_ms=1, max_delay_ms=1)
    async with ToolClient.for_servers([http_spec(fake_servers, "good")], retry=policy) as t:
        with pytest.raises(AccordError) as info:
            await t.call("orders.lookup", {"order_id": order_id, "customer_id": "C-01"})
    assert info.value.code is ErrorCode.UNAVAILABLE
    assert not never_sent(info.value)


async def test_the_client_speaks_the_newest_revision_the_server_does(
    fake_servers: FakeServers,
) -> None:
    # mcp 2.3.0 servers answer server/discover: the session is 2026-07-28 (no initialize).
    async with ToolClient.for_servers([http_spec(fake_servers, "good")]) as tools:
        assert (await tools.call("orders.lookup", LOOKUP))["order_id"] == "O-1001"
        assert [s.protocol for s in tools.statuses()] == [LATEST_MODERN_VERSION]
