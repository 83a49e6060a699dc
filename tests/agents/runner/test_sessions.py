"""Sessions are isolated by (app, user, session): another user's session id never reaches yours."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.agents.runner.helpers import collect, final

from accord.agents.runner import Runner, SessionKey
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status

pytestmark = pytest.mark.timeout(120)


def test_workflow_ids_differ_by_app_user_and_session() -> None:
    base = SessionKey("refund", "C-01", "s")
    others = [
        SessionKey("shop", "C-01", "s"),
        SessionKey("refund", "C-02", "s"),
        SessionKey("refund", "C-01", "t"),
        SessionKey("refun", "dC-01", "s"),  # the same characters, split differently
    ]
    ids = {key.workflow_id(1) for key in [base, *others]}
    assert len(ids) == 5
    assert base.workflow_id(1) != base.workflow_id(2)
    assert "C-01" not in base.workflow_id(1)  # ids do not leak who the user is


@pytest.mark.parametrize("field", ["app", "user", "session"])
def test_empty_or_unprintable_key_fields_are_invalid(field: str) -> None:
    values = {"app": "refund", "user": "C-01", "session": "s"}
    for bad in ("", "a\0b", "x" * 201):
        with pytest.raises(AccordError) as refused:
            SessionKey(**{**values, field: bad})
        assert refused.value.code is ErrorCode.INVALID_INPUT


async def test_another_users_same_session_id_never_reaches_your_workflow(runner: Runner) -> None:
    mine = final(
        await collect(runner, "my mug arrived broken, order O-1005", user="C-01", session="shared")
    )
    assert mine.status is Status.WAITING

    # C-02 uses the same session id and sends what would answer C-01's question.
    theirs = await collect(
        runner, "the handle snapped off, photo IMG_2291.jpg", user="C-02", session="shared"
    )
    answer = final(theirs)
    assert answer.workflow_id != mine.workflow_id
    assert answer.status is Status.WAITING  # a new conversation: intake asks for the order
    assert "order number" in answer.text
    assert all(e.workflow_id in (None, answer.workflow_id) for e in theirs)

    # C-01's workflow still waits for C-01, and C-01's answer completes it.
    done = final(
        await collect(
            runner, "the handle snapped off, photo IMG_2291.jpg", user="C-01", session="shared"
        )
    )
    assert done.workflow_id == mine.workflow_id
    assert done.status is Status.COMPLETED
    assert (done.data or {})["rule"] == "damage_with_evidence"


async def test_another_app_on_the_same_log_has_its_own_sessions(data_dir: Path) -> None:
    log = f"sqlite:///{data_dir / 'shared-log.db'}"
    async with Runner("refund", event_log_url=log, in_process=True) as refund:
        asked = final(await collect(refund, "I want a refund", user="C-01", session="s"))
    async with Runner("shop", event_log_url=log, in_process=True) as shop:
        other = final(await collect(shop, "O-1002", user="C-01", session="s"))
    assert asked.status is Status.WAITING
    assert other.workflow_id != asked.workflow_id
    assert other.status is Status.WAITING  # "O-1002" alone is a new request, not an answer


async def test_a_finished_session_starts_a_new_workflow_and_a_restart_finds_the_turn(
    data_dir: Path,
) -> None:
    log = f"sqlite:///{data_dir / 'turns.db'}"
    async with Runner(event_log_url=log, in_process=True) as runner:
        one = final(await collect(runner, "refund O-1002, too small", user="C-01", session="t"))
        two = final(
            await collect(
                runner, "I want a refund, the running shoes do not fit", user="C-01", session="t"
            )
        )
    assert one.status is Status.COMPLETED
    assert two.workflow_id != one.workflow_id
    assert two.status is Status.WAITING
    # A new Runner on the same log continues the waiting turn (the log is the only record).
    async with Runner(event_log_url=log, in_process=True) as again:
        three = final(await collect(again, "O-1002", user="C-01", session="t"))
    assert three.workflow_id == two.workflow_id
    assert three.status is Status.COMPLETED
