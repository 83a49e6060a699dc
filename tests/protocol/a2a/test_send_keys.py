"""SendKeys on SQLite and PostgreSQL: one claim per key, conflicts, settling, taking over a
claim whose process is gone, forgetting, and retention; and the canonical form of a message."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.server.send_claim import send_key
from accord.protocol.a2a.server.send_keys import SendKeys
from accord.protocol.a2a.server.send_tables import send_table_name

OWNER = "accord/C-01"


@pytest.fixture(params=["sqlite", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sends.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def keys(url: str) -> AsyncIterator[SendKeys]:
    s = SendKeys(url, table=send_table_name("unit-test"), lease_s=30.0)
    await s.open()
    yield s
    await s.close()


async def test_of_concurrent_claims_of_one_key_exactly_one_wins(keys: SendKeys) -> None:
    results = await asyncio.gather(*(keys.claim(OWNER, "m-1", "f", f"t-{i}") for i in range(8)))
    assert sum(1 for new, _ in results if new) == 1
    assert len({found.task_id for _, found in results}) == 1  # every copy names the same task
    # Another owner's id is another key.
    new, found = await keys.claim("accord/C-02", "m-1", "f", "t-x")
    assert new
    assert found.task_id == "t-x"


async def test_other_content_under_a_sent_id_is_a_conflict(keys: SendKeys) -> None:
    await keys.claim(OWNER, "m-2", "f", "t")
    with pytest.raises(AccordError) as refused:
        await keys.claim(OWNER, "m-2", "other", "t2")
    assert refused.value.code is ErrorCode.IDEMPOTENCY_CONFLICT


async def test_settle_renew_take_over_and_forget(keys: SendKeys) -> None:
    new, found = await keys.claim(OWNER, "m-3", "f", "t")
    assert new
    assert found.live
    assert not found.settled
    await keys.renew()
    assert not await keys.take_over(OWNER, "m-3")  # a live claim is not taken
    await keys.settle(OWNER, "m-3", b"reply")
    settled = await keys.read(OWNER, "m-3")
    assert settled is not None
    assert settled.settled
    assert settled.reply == b"reply"
    assert not await keys.take_over(OWNER, "m-3")  # an answered key is never run again
    # A claim whose process is gone (its lease lapsed) is taken over by one copy. (The other
    # process opens first: a SQLite process lapses every earlier one's claims when it opens.)
    other = SendKeys(keys.url, table=keys.table, lease_s=30.0)
    try:
        await other.open()
        await keys.claim(OWNER, "m-4", "f", "t4")
        assert not await other.take_over(OWNER, "m-4")
        await keys.close()  # a clean stop lets its claims lapse
        await keys.open()
        taken = await asyncio.gather(other.take_over(OWNER, "m-4"), keys.take_over(OWNER, "m-4"))
        assert taken.count(True) == 1
        found4 = await other.read(OWNER, "m-4")
        assert found4 is not None
        assert found4.live
        assert found4.task_id == "t4"
        # A claim that made nothing is forgotten: the next copy claims it anew.
        winner = other if taken[0] else keys
        await winner.forget(OWNER, "m-4")
        assert await keys.read(OWNER, "m-4") is None
    finally:
        await other.close()


async def test_keys_go_with_their_tasks(keys: SendKeys) -> None:
    keys.retention_s = 0.0
    for mid in ("kept", "gone", "replied"):
        await keys.claim(OWNER, mid, "f", f"task-{mid}")
        await keys.settle(OWNER, mid, b"r" if mid == "replied" else None)
    await keys.claim(OWNER, "working", "f", "task-working")

    async def exists(owner: str, task_id: str) -> bool:
        return task_id == "task-kept"

    assert await keys.purge(exists) == 2
    assert await keys.read(OWNER, "kept") is not None
    assert await keys.read(OWNER, "working") is not None  # a claim in progress stays
    assert await keys.read(OWNER, "gone") is None
    assert await keys.read(OWNER, "replied") is None


def test_the_same_message_has_one_key_however_it_is_written() -> None:
    first = {
        "messageId": "m",
        "parts": [{"data": {"b": 1, "a": "x"}}, {"text": "hi"}],
        "metadata": {"skill": "s", "traceparent": "00-1"},
    }
    again = {
        "message_id": "m",
        "parts": [{"data": {"a": "x", "b": 1.0}}, {"text": "hi"}],
        "metadata": {"skill": "s", "traceparent": "00-2", "dev.accord/envelope": {}},
    }
    one, two = send_key(first), send_key(again)
    assert one is not None
    assert one == two
    for changed in (
        {**first, "parts": [{"text": "hello"}]},
        {**first, "metadata": {"skill": "other"}},
        {**first, "taskId": "t"},
    ):
        other = send_key(changed)
        assert other is not None
        assert other.fingerprint != one.fingerprint
    assert send_key({"parts": [{"text": "no id"}]}) is None
