"""The budget guard: units counted across a task's turns, tool calls per turn, the deadline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.budget_guard import BudgetGuard

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def envelope(units: int = 3, tool_calls: int = 2, deadline_s: float = 60.0) -> DelegationEnvelope:
    return DelegationEnvelope(
        goal="test",
        budget=Budget(
            units=units, tool_calls=tool_calls, deadline=NOW + timedelta(seconds=deadline_s)
        ),
        tenant=Tenant(app="accord", user="C-01", session="s-1"),
    )


def test_a_turn_is_granted_the_time_to_the_deadline_and_charged_its_units() -> None:
    allowance = BudgetGuard(units_per_turn=2).admit(envelope(units=5), 1, now=NOW)
    assert allowance.remaining_s == 60.0
    assert allowance.spent == 3


def test_units_run_out_across_the_turns_of_a_task() -> None:
    guard = BudgetGuard(units_per_turn=1)
    spent = 0
    for _ in range(3):
        spent = guard.admit(envelope(units=3), spent, now=NOW).spent
    with pytest.raises(AccordError) as refused:
        guard.admit(envelope(units=3), spent, now=NOW)
    assert refused.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert refused.value.details == {"units": 3, "spent": 3, "per_turn": 1}


def test_a_turn_needs_its_tool_calls() -> None:
    BudgetGuard(tool_calls_per_turn=2).admit(envelope(tool_calls=2), 0, now=NOW)
    with pytest.raises(AccordError) as refused:
        BudgetGuard(tool_calls_per_turn=3).admit(envelope(tool_calls=2), 0, now=NOW)
    assert refused.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert refused.value.details == {"tool_calls": 2, "tool_calls_spent": 0}


def test_tool_calls_run_out_across_the_turns_of_a_task() -> None:
    """Issue 13: tool_calls is a counter, not a per-turn check."""
    guard = BudgetGuard(units_per_turn=1, tool_calls_per_turn=2)
    first = guard.admit(envelope(units=10, tool_calls=5), 0, now=NOW)
    assert (first.spent, first.tool_calls_spent) == (1, 2)
    second = guard.admit(envelope(units=10, tool_calls=5), first.spent, tool_calls_spent=2, now=NOW)
    assert second.tool_calls_spent == 4
    with pytest.raises(AccordError) as refused:
        guard.admit(envelope(units=10, tool_calls=5), second.spent, tool_calls_spent=4, now=NOW)
    assert refused.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert refused.value.details == {"tool_calls": 5, "tool_calls_spent": 4}


@pytest.mark.parametrize("deadline_s", [0.0, -5.0])
def test_a_passed_deadline_refuses_the_turn_as_a_timeout(deadline_s: float) -> None:
    with pytest.raises(AccordError) as refused:
        BudgetGuard().admit(envelope(deadline_s=deadline_s), 0, now=NOW)
    assert refused.value.code is ErrorCode.RETRYABLE_TIMEOUT


def test_units_are_checked_before_the_deadline() -> None:
    with pytest.raises(AccordError) as refused:
        BudgetGuard().admit(envelope(units=1, deadline_s=-1.0), 1, now=NOW)
    assert refused.value.code is ErrorCode.BUDGET_EXHAUSTED


def test_an_overrun_is_a_retryable_timeout_naming_the_deadline() -> None:
    error = BudgetGuard.overrun(envelope())
    assert error.code is ErrorCode.RETRYABLE_TIMEOUT
    assert error.details == {"deadline": (NOW + timedelta(seconds=60)).isoformat()}
