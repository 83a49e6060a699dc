"""Bounded resources on a real orchestrator: a person's request rate (RATE_LIMITED with
Retry-After, services unaffected), open streams per caller, and idle streams ended by the
server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from accord.contracts.errors import AccordError, ErrorCode
from tests.hostile.conftest import SECRET, token
from tests.support.processes import Service, run_service

pytestmark = pytest.mark.timeout(120)

IDLE_S = 1.5


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    base: Path = tmp_path_factory.mktemp("limits")
    env = {
        "ACCORD_DATA_DIR": str(base / "data"),
        "ACCORD_JWT_SECRET": SECRET,
        "ACCORD_RATE_LIMIT_PER_S": "2",
        "ACCORD_RATE_LIMIT_BURST": "6",
        "ACCORD_MAX_STREAMS_PER_PRINCIPAL": "2",
        "ACCORD_STREAM_IDLE_S": str(IDLE_S),
    }
    args = ["serve", "orchestrator"]
    with run_service("orchestrator", args, env=env, log_dir=base, deadline_s=90.0) as service:
        yield service


def _headers(bearer: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {bearer}", "A2A-Version": "1.0"}


def test_a_person_over_their_rate_is_told_when_to_come_back(limited: Service) -> None:
    person = _headers(token("C-07"))
    service = _headers(token("svc:batch", "service"))
    with httpx.Client(base_url=limited.url, timeout=30) as http:
        answers = [http.get("/tasks", headers=person) for _ in range(12)]
        refused = [r for r in answers if r.status_code == 429]
        assert refused, [r.status_code for r in answers]
        assert all(r.status_code in (200, 429) for r in answers)
        assert int(refused[0].headers["Retry-After"]) >= 1
        error = AccordError.from_rest(429, refused[0].json())
        assert error.code is ErrorCode.RATE_LIMITED
        # A service principal has its own, larger allowance; another person theirs.
        assert all(http.get("/tasks", headers=service).status_code == 200 for _ in range(12))
        assert http.get("/tasks", headers=_headers(token("C-08"))).status_code == 200


async def test_streams_are_capped_per_caller_and_idle_ones_are_ended(limited: Service) -> None:
    headers = _headers(token("C-09"))
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "我想退款"}]}
        },
    }
    async with httpx.AsyncClient(base_url=limited.url, timeout=30) as http:
        task = (await http.post("/", headers=headers, json=send)).json()["result"]["task"]
        subscribe = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "SubscribeToTask",
            "params": {"id": task["id"]},
        }

        async def hold(opened: asyncio.Event | None = None) -> tuple[int, float]:
            started = time.monotonic()
            async with http.stream("POST", "/", headers=headers, json=subscribe) as r:
                async for line in r.aiter_lines():
                    if opened is not None and line.startswith("data:"):
                        opened.set()
                return r.status_code, time.monotonic() - started

        opened = [asyncio.Event(), asyncio.Event()]
        first = asyncio.ensure_future(hold(opened[0]))
        second = asyncio.ensure_future(hold(opened[1]))
        async with asyncio.timeout(20):  # both streams are open before the third asks
            await asyncio.gather(*(o.wait() for o in opened))
        third = await hold()
        assert third[0] == 429
        for status, lasted in await asyncio.gather(first, second):
            assert status == 200
            assert IDLE_S <= lasted < IDLE_S + 10  # ended by the server, not by the client
        # The slots came back.
        assert (await hold())[0] == 200
