"""Which workflow events a refund's stream shows (conversation.describe): every node a client
names, without the lines that say nothing the next line does not."""

from __future__ import annotations

from typing import Any

from accord.agents.refund.conversation import describe
from accord.runtime.workflow import EventType, LogEvent

# A paid refund's log, as the runtime appends it (graph version 3).
_PAID = [
    ("intake", {"label": "refund", "output": {"order_id": "O-1001", "reason": "wrong_size"}}),
    ("checks", {"output": {}}),
    ("order", {"output": {"found": True}}),
    ("policy", {"output": {"eligible": True, "rule": "within_window"}}),
    ("risk", {"output": {"risk": "low"}}),
    ("decide", {"label": "refund", "output": {"decision": "refund"}}),
    ("refund", {"output": {"decision": "refunded"}}),
]


def _event(kind: EventType, node: str, data: dict[str, Any]) -> LogEvent:
    return LogEvent("wf-1", 0, kind, node, data, 0.0)


def _lines() -> list[str]:
    lines = []
    for node, done in _PAID:
        for event in (
            _event(EventType.NODE_STARTED, node, {"attempt": 1}),
            _event(EventType.NODE_OUTPUT, node, done),
        ):
            text = describe(event)
            if text is not None:
                lines.append(text)
    return lines


def test_a_paid_refund_shows_every_node_but_the_fan_out() -> None:
    lines = _lines()
    assert [line.split(":")[0] for line in lines] == [
        "intake", "intake", "order", "order", "policy", "policy", "risk", "risk",
        "decide", "refund", "refund",
    ]  # fmt: skip
    assert "decide: done (refund) -> refund" in lines


def test_a_retrying_node_is_still_shown() -> None:
    failed = {"error": {"code": "UNAVAILABLE"}, "final": False}
    assert describe(_event(EventType.NODE_FAILED, "risk", failed)) == "risk: UNAVAILABLE, retrying"
