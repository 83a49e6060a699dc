"""A session read back for a user (ADK's get_session / list_sessions): its events and state,
from the workflow log, the same from a new Runner on the same log, and nobody else's."""

from __future__ import annotations

from pathlib import Path

from tests.agents.runner.helpers import collect

from accord.agents.runner import Runner
from accord.contracts.status import Status


async def test_a_session_reads_back_with_its_events_and_state(data_dir: Path) -> None:
    log = f"sqlite:///{data_dir / 'runner-log.db'}"
    async with Runner(in_process=True, event_log_url=log) as runner:
        asked = await collect(runner, "退款 O-1001", user="C-01", session="s-1")
        done = await collect(runner, "鞋子太小了", user="C-01", session="s-1")
        assert asked[-1].status is Status.WAITING
        assert done[-1].status is Status.COMPLETED
        session = await runner.get_session(user="C-01", session="s-1")
        listed = await runner.list_sessions(user="C-01")
        service = runner.session_service
        same = await service.get_session(app_name="accord", user_id="C-01", session_id="s-1")
        assert await runner.get_session(user="C-02", session="s-1") is None
        assert await runner.list_sessions(user="C-02") == []
        assert await runner.get_session(user="C-01", session="none") is None
    assert session is not None
    assert same == session
    assert (session.id, session.app_name, session.user_id) == ("s-1", "accord", "C-01")
    said = [(e.author, e.text) for e in session.events if e.author == "user"]
    assert said == [("user", "退款 O-1001"), ("user", "鞋子太小了")]
    waiting = [e for e in session.events if e.status is Status.WAITING]
    assert [e.text for e in waiting] == [asked[-1].text]  # the question, as it was asked
    final = session.events[-1]
    assert final.is_final_response()
    assert final.status is Status.COMPLETED
    assert final.text == done[-1].text
    assert (final.data or {})["decision"] == "refunded"
    assert {e.author for e in session.events} >= {"intake", "order", "policy", "risk", "refund"}
    assert len({e.invocation_id for e in session.events}) == 2  # one per customer message
    assert session.state["status"] == "completed"
    assert session.state["decision"] == "refunded"
    assert session.state["turns"] == 1
    assert [s.id for s in listed] == ["s-1"]
    assert listed[0].events == []  # listing reads no events (as in ADK)

    async with Runner(in_process=True, event_log_url=log) as fresh:
        again = await fresh.get_session(user="C-01", session="s-1")
    assert again is not None
    assert [e.text for e in again.events] == [e.text for e in session.events]


async def test_a_waiting_session_shows_the_question_in_its_state(runner: Runner) -> None:
    await collect(runner, "I want a refund", user="C-01", session="w")
    session = await runner.get_session(user="C-01", session="w")
    assert session is not None
    assert session.state["status"] == "waiting"
    assert session.state["waiting_reason"] == "input"
    assert "order number" in session.state["question"]
    assert session.events[-1].status is Status.WAITING
