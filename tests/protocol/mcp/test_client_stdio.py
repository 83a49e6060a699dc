"""ToolClient against the test servers over stdio (the server is a child process)."""

from __future__ import annotations

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import RetryPolicy
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import ServerSpec
from accord.protocol.mcp.contract_check import FindingKind
from tests.protocol.mcp.support import contracts, stdio_spec

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def test_stdio_server_is_checked_and_called() -> None:
    async with ToolClient.for_servers([stdio_spec("good")]) as tools:
        assert {t.name for t in tools.listed("good")} >= {"orders.lookup", "debug.echo"}
        out = await tools.call("orders.lookup", {"order_id": "O-1001", "customer_id": "C-01"})
        echo = await tools.call("debug.echo", {"text": "hi"}, traceparent=TRACEPARENT)
        with pytest.raises(AccordError) as info:
            await tools.call("orders.lookup", {"order_id": "O-0404", "customer_id": "C-01"})
    assert out["status"] == "delivered"
    assert echo == {"text": "hi", "traceparent": TRACEPARENT}
    assert info.value.code is ErrorCode.NOT_FOUND


async def test_stdio_contract_violation_at_connect() -> None:
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([stdio_spec("annotation")]):
            pytest.fail("a server that breaks its contract must not be usable")
    assert info.value.code is ErrorCode.CONTRACT_VIOLATION
    assert info.value.details["findings"][0]["kind"] == FindingKind.ANNOTATION.value


async def test_stdio_command_that_does_not_exist_is_unavailable() -> None:
    spec = ServerSpec.stdio("ghost", "/nonexistent/accord-tool-server", [], contracts())
    with pytest.raises(AccordError) as info:
        async with ToolClient.for_servers([spec], connect_timeout_s=10):
            pass
    assert info.value.code is ErrorCode.UNAVAILABLE


async def test_a_stdio_server_that_dies_is_replaced_on_the_next_call() -> None:
    once = RetryPolicy(max_attempts=1)
    async with ToolClient.for_servers([stdio_spec("good")], retry=once) as tools:
        with pytest.raises(AccordError) as info:
            await tools.call("debug.echo", {"text": "exit"})  # the server process exits
        assert info.value.code is ErrorCode.UNAVAILABLE
        again = await tools.call("debug.echo", {"text": "back"})
    assert again["text"] == "back"
