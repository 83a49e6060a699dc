"""The budget guard: whether the delegation envelope leaves room for one more turn.

The envelope's budget is one account for the whole request tree: every turn of a task costs
``units_per_turn`` units and ``tool_calls_per_turn`` of the envelope's tool calls, both counted
across turns in the task's metadata (``SPENT_META_KEY``, ``TOOL_CALLS_SPENT_META_KEY``), so a
caller that gave this task an envelope of what it had left reads back what it spent; the turn
must end before the envelope's deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from accord.contracts.envelope import DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode


@dataclass(frozen=True)
class Allowance:
    """What the guard grants a turn: the time it may take, the units spent once it runs."""

    remaining_s: float
    spent: int
    tool_calls_spent: int = 0


@dataclass(frozen=True)
class BudgetGuard:
    units_per_turn: int = 1
    tool_calls_per_turn: int = 0

    def admit(
        self,
        envelope: DelegationEnvelope,
        spent: int,
        *,
        tool_calls_spent: int = 0,
        now: datetime | None = None,
    ) -> Allowance:
        """The allowance of the next turn, after ``spent`` units and ``tool_calls_spent`` tool
        calls of earlier turns.

        Raises BUDGET_EXHAUSTED (units or tool calls) or RETRYABLE_TIMEOUT (deadline passed).
        """
        budget = envelope.budget
        if budget.units - spent < self.units_per_turn:
            raise AccordError(
                ErrorCode.BUDGET_EXHAUSTED,
                f"budget has {budget.units - spent} units left; a turn costs {self.units_per_turn}",
                {"units": budget.units, "spent": spent, "per_turn": self.units_per_turn},
            )
        if budget.tool_calls - tool_calls_spent < self.tool_calls_per_turn:
            raise AccordError(
                ErrorCode.BUDGET_EXHAUSTED,
                f"budget has {budget.tool_calls - tool_calls_spent} tool calls left; a turn "
                f"needs {self.tool_calls_per_turn}",
                {"tool_calls": budget.tool_calls, "tool_calls_spent": tool_calls_spent},
            )
        remaining_s = (budget.deadline - (now or datetime.now(UTC))).total_seconds()
        if remaining_s <= 0:
            raise AccordError(
                ErrorCode.RETRYABLE_TIMEOUT,
                "the delegation deadline has already passed",
                {"deadline": budget.deadline.isoformat()},
            )
        return Allowance(
            remaining_s=remaining_s,
            spent=spent + self.units_per_turn,
            tool_calls_spent=tool_calls_spent + self.tool_calls_per_turn,
        )

    @staticmethod
    def overrun(envelope: DelegationEnvelope) -> AccordError:
        """The error of a turn still working when the envelope's deadline passed."""
        return AccordError(
            ErrorCode.RETRYABLE_TIMEOUT,
            "the delegation deadline passed while the agent was working",
            {"deadline": envelope.budget.deadline.isoformat()},
        )
