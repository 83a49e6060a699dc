"""Connecting while the agent is not up yet (restarting, or behind a load balancer that is):
with a retry policy the client reads the card again until the agent answers, as it retries its
other calls; without one it fails at once, so a command run against a mesh that is down says
so without waiting (issue #35: "A2AClient.connect does not retry reading the Agent Card")."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import RetryPolicy
from accord.protocol.a2a.client import A2AClient
from tests.support.ports import free_port
from tests.support.processes import run_service

pytestmark = pytest.mark.timeout(120)

PATIENT = RetryPolicy(max_attempts=None, base_delay_ms=100, max_delay_ms=500, deadline_ms=60_000)


async def test_without_a_policy_a_card_nobody_serves_fails_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(AccordError) as refused:
        await A2AClient.connect(f"http://127.0.0.1:{free_port()}")
    assert refused.value.code is ErrorCode.UNAVAILABLE
    assert time.monotonic() - started < 5


async def test_with_a_policy_the_card_is_read_once_the_agent_is_up(tmp_path: Path) -> None:
    port = free_port()
    connecting = asyncio.ensure_future(A2AClient.connect(f"http://127.0.0.1:{port}", retry=PATIENT))
    await asyncio.sleep(0.5)  # the client has found nobody at least once by now
    assert not connecting.done()
    env = {"ACCORD_DATA_DIR": str(tmp_path / "data")}
    with run_service("policy", ["serve", "policy"], port=port, env=env, log_dir=tmp_path):
        async with asyncio.timeout(60):
            client = await connecting
        async with client:
            assert client.card.name == "policy-check"
