"""The facts of a workflow event that a status message carries (event_facts.py): the event's own
type, node, log time and seq, and, when a node's run ends, when that run started."""

from __future__ import annotations

from accord.runtime.workflow import EventType, LogEvent
from accord.runtime.workflow.event_facts import WORKFLOW_EVENT_KEY, EventFacts, iso_time


def _event(seq: int, kind: EventType, node: str | None, at: float) -> LogEvent:
    return LogEvent("w-1", seq, kind, node, {}, at)


def test_an_ended_run_names_its_start_and_a_start_does_not() -> None:
    log = [
        _event(1, EventType.WORKFLOW_STARTED, None, 1_780_000_000.0),
        _event(2, EventType.NODE_STARTED, "decide", 1_780_000_000.25),
        _event(3, EventType.NODE_OUTPUT, "decide", 1_780_000_001.5),
        _event(4, EventType.NODE_STARTED, "refund", 1_780_000_002.0),
    ]
    facts = EventFacts()
    for event in log:
        facts.seen(event)
        if event.seq == 3:
            assert facts.of(event) == {
                WORKFLOW_EVENT_KEY: {
                    "event": "node_output",
                    "node": "decide",
                    "at": "2026-05-28T20:26:41.500Z",
                    "seq": 3,
                    "started": "2026-05-28T20:26:40.250Z",
                }
            }
    assert "started" not in facts.of(log[3])[WORKFLOW_EVENT_KEY]


def test_a_retried_node_is_timed_from_its_last_attempt() -> None:
    facts = EventFacts()
    for seq, kind, at in (
        (1, EventType.NODE_STARTED, 10.0),
        (2, EventType.NODE_FAILED, 11.0),
        (3, EventType.NODE_STARTED, 12.0),
    ):
        facts.seen(_event(seq, kind, "risk", at))
    ended = _event(4, EventType.NODE_OUTPUT, "risk", 12.5)
    assert facts.of(ended)[WORKFLOW_EVENT_KEY]["started"] == iso_time(12.0)
    assert iso_time(12.0) == "1970-01-01T00:00:12.000Z"
