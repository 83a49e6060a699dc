"""ADK's spelling of a request (user_id, session_id, new_message=Content) reaches the same
session as ours; one thing given twice, differently, is refused."""

from __future__ import annotations

import pytest

from accord.agents.runner import Content, Part, Runner
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status


async def test_adk_keywords_are_the_same_request(runner: Runner) -> None:
    message = Content(role="user", parts=[Part.text_of("I want a refund")])
    events = [
        e async for e in runner.run_async(user_id="C-01", session_id="adk", new_message=message)
    ]
    assert events[0].author == "user"
    assert events[0].text == "I want a refund"
    assert events[-1].status is Status.WAITING
    # the same session in our spelling: the answer continues the same workflow
    more = [e async for e in runner.run_async("O-1001, too small", user="C-01", session="adk")]
    assert more[-1].status is Status.COMPLETED
    assert more[-1].workflow_id == events[-1].workflow_id
    data = Content(role="user", parts=[Part.data_of({"order_id": "O-1005"})])
    asked = [e async for e in runner.run_async(user_id="C-01", session_id="d", new_message=data)]
    assert asked[-1].text.startswith("Why would you like a refund")  # the order came as data


@pytest.mark.parametrize(
    "kwargs",
    [
        {"user": "C-01", "user_id": "C-02", "session": "s"},
        {"user": "C-01", "session": "s", "session_id": "t"},
        {"text": "refund", "new_message": "refund O-1001", "user": "C-01", "session": "s"},
        {"session": "s"},
    ],
)
async def test_a_request_given_twice_or_for_nobody_is_refused(
    runner: Runner, kwargs: dict[str, str]
) -> None:
    with pytest.raises(AccordError) as refused:
        async for _ in runner.run_async(**kwargs):  # type: ignore[arg-type]
            pass
    assert refused.value.code is ErrorCode.INVALID_INPUT
