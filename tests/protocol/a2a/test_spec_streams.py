"""A2A 1.0 section 3 MUSTs on event streams, on the wire of a real agent process over both
bindings: a subscription ends with its task (3.1.6); several streams of one task see the same
events in the same order and closing one leaves the others (3.5.2). docs/conformance.md names
each test here."""

from __future__ import annotations

from collections.abc import Callable

from tests.protocol.a2a.sse_reader import SseReader, state_of
from tests.protocol.a2a.wire_client import AgentClient, auth, message

TERMINAL = "TASK_STATE_COMPLETED"


def test_a_subscription_ends_when_its_task_reaches_a_terminal_state(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.1.6: subscribed while the task waits, the stream follows the answer through to the
    terminal state and then the server closes it (SseReader.rest fails if it stays open)."""
    headers = auth(token_for(f"C-sub-end-{client.transport}"))
    waiting = client.send(headers, message({"mode": "ask"})).task
    stream = SseReader(client.url, client.transport, headers, waiting["id"])
    assert state_of(stream.next()) == "TASK_STATE_INPUT_REQUIRED"
    assert client.send(headers, message(text="42", task_id=waiting["id"])).state == TERMINAL
    rest = stream.rest()
    states = [s for s in map(state_of, rest) if s is not None]
    assert states[-1] == TERMINAL
    assert state_of(rest[-1]) == TERMINAL  # nothing follows the terminal state
    assert stream.closed


def test_streams_of_one_task_get_the_same_events_and_one_closing_leaves_the_others(
    client: AgentClient, token_for: Callable[..., str]
) -> None:
    """3.5.2: three subscriptions to one waiting task; the client of one closes it after the
    first event; the other two still receive every event of the continuation, the same events
    in the same order, up to the terminal state."""
    headers = auth(token_for(f"C-taps-{client.transport}"))
    waiting = client.send(headers, message({"mode": "ask"})).task
    first, second = (SseReader(client.url, client.transport, headers, waiting["id"]) for _ in "ab")
    leaver = SseReader(client.url, client.transport, headers, waiting["id"], keep=1)
    for stream in (first, second, leaver):
        assert state_of(stream.next()) == "TASK_STATE_INPUT_REQUIRED"
    assert leaver.rest() == []  # closed by its client before anything else happened
    assert client.send(headers, message(text="42", task_id=waiting["id"])).state == TERMINAL
    seen_first, seen_second = first.rest(), second.rest()
    assert seen_first == seen_second
    assert [state_of(e) for e in seen_first if state_of(e)] == ["TASK_STATE_WORKING", TERMINAL]
    assert any("artifactUpdate" in e for e in seen_first)
