from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from accord.contracts import AccordError, DelegationEnvelope, ErrorCode, parse_envelope
from accord.contracts.keys import DELEGATION_EXTENSION_URI


def envelope(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "goal": "decide whether order O-1001 may be refunded",
        "constraints": {"currency": "CNY", "max_cents": 5999},
        "budget": {
            "units": 10,
            "tool_calls": 5,
            "deadline": (datetime.now(UTC) + timedelta(minutes=5)).isoformat(),
        },
        "context_refs": ["order:O-1001"],
        "tenant": {"app": "accord", "user": "C-01", "session": "s-1"},
        "parent_task": "task-123",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    }
    base.update(overrides)
    return base


def test_valid_envelope_round_trips_through_metadata() -> None:
    env = parse_envelope({DELEGATION_EXTENSION_URI: envelope()})
    assert env is not None
    assert env.tenant.user == "C-01"
    again = parse_envelope(env.to_metadata())
    assert again == env


def test_missing_envelope() -> None:
    with pytest.raises(AccordError) as info:
        parse_envelope({})
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert parse_envelope(None, required=False) is None


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"goal": ""}, "goal"),
        (
            {"budget": {"units": -1, "tool_calls": 1, "deadline": "2030-01-01T00:00:00Z"}},
            "budget.units",
        ),
        (
            {"budget": {"units": 1, "tool_calls": 1, "deadline": "2030-01-01T00:00:00"}},
            "budget.deadline",
        ),
        ({"tenant": {"app": "a", "user": "../etc", "session": "s"}}, "tenant.user"),
        ({"traceparent": "not-a-traceparent"}, "traceparent"),
        ({"surprise": True}, "surprise"),
        ({"context_refs": ["x"] * 33}, "context_refs"),
    ],
)
def test_malformed_envelope_names_the_field(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(AccordError) as info:
        parse_envelope({DELEGATION_EXTENSION_URI: envelope(**overrides)})
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert info.value.details["field"] == field
    assert "Traceback" not in info.value.message


def test_oversized_envelope() -> None:
    big = envelope(constraints={f"k{i}": "x" * 1000 for i in range(20)})
    with pytest.raises(AccordError) as info:
        parse_envelope({DELEGATION_EXTENSION_URI: big})
    assert info.value.details["requirement"] == "ENV-003"


def test_not_an_object() -> None:
    with pytest.raises(AccordError) as info:
        parse_envelope({DELEGATION_EXTENSION_URI: "goal=refund"})
    assert info.value.code is ErrorCode.INVALID_INPUT


def test_budget_expiry() -> None:
    env = DelegationEnvelope.model_validate(envelope())
    assert not env.budget.expired()
    assert env.budget.expired(datetime.now(UTC) + timedelta(hours=1))
