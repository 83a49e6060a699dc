"""Call budgets in abstract units: not money, not tokens, just what a call is allowed to cost.

A fast call costs ``Costs.fast`` units, a deep call ``Costs.deep``; a failed call costs the same
as a successful one (the provider did the work, or at least we waited for it). A charge that the
remaining units cannot cover is refused before the call is made. The delegation envelope's budget
is the one enforced: build the budget of a task with :meth:`UnitBudget.from_envelope`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from accord.contracts.envelope import Budget, DelegationEnvelope
from accord.contracts.errors import AccordError, ErrorCode


class Costs(BaseModel):
    """Units per call on each tier (configurable; the deep tier is dearer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fast: int = Field(default=1, ge=0, le=1_000)
    deep: int = Field(default=3, ge=0, le=1_000)


class UnitBudget:
    """What one task may still spend. Charges are synchronous, so they are atomic in asyncio.

    ``spent`` is given when a workflow resumes and rebuilds its budget from its event log.
    """

    def __init__(self, units: int, *, spent: int = 0, deadline: datetime | None = None) -> None:
        if units < 0 or spent < 0:
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                "budget units cannot be negative",
                {"field": "budget.units"},
            )
        self.units = units
        self.spent = spent
        self.deadline = deadline

    @classmethod
    def from_envelope(cls, source: DelegationEnvelope | Budget, *, spent: int = 0) -> UnitBudget:
        budget = source.budget if isinstance(source, DelegationEnvelope) else source
        return cls(budget.units, spent=spent, deadline=budget.deadline)

    @property
    def remaining(self) -> int:
        return max(0, self.units - self.spent)

    def covers(self, cost: int) -> bool:
        return cost <= self.remaining

    def expired(self, now: datetime | None = None) -> bool:
        return self.deadline is not None and (now or datetime.now(UTC)) >= self.deadline

    def charge(self, cost: int, *, route: str) -> None:
        """Spend ``cost`` units or raise BUDGET_EXHAUSTED without spending anything."""
        if not self.covers(cost):
            raise AccordError(
                ErrorCode.BUDGET_EXHAUSTED,
                f"a {route} call needs {cost} units; {self.remaining} remain",
                {"route": route, "needed": cost, "remaining": self.remaining},
            )
        self.spent += cost

    def snapshot(self) -> dict[str, int]:
        return {"units": self.units, "spent": self.spent, "remaining": self.remaining}

    def __repr__(self) -> str:
        return f"UnitBudget(units={self.units}, spent={self.spent})"
