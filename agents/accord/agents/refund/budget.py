"""The request's one budget, as the refund workflow spends it.

A request (the customer's task) has one budget: the units and tool calls of its delegation
envelope. Everything in its tree spends from it:

    the customer's turns     1 unit each (the first message and every answer; the
                             orchestrator's budget guard admits a turn only if a unit is left)
    model calls              the router's cost per call (fast 1, deep 3; failed calls too)
    tool calls               1 tool call each (orders.lookup, refunds.get, refunds.issue...)
    child turns              a child (policy-check, risk-check) gets an envelope of what is
                             left (a share, so that its sibling running in parallel gets some
                             too); its grant is reserved while it runs, and what it reports
                             spent (task metadata ``dev.accord/spent``, ``.../toolCallsSpent``)
                             is what stays charged, once checked (a non-negative integer,
                             never less than before, within the grant: otherwise the child
                             broke the contract and its whole grant stays charged, ENV-010,
                             accord.protocol.a2a.spent_report)
    not sent                 a tool call or a child turn that provably never left (refused
                             connection, open circuit breaker: accord.protocol.sent) is given
                             back: retrying a dead server does not use up the request

Spending is recorded in the workflow's log (accord.runtime.workflow.spending): the workflow's
``spent`` is the sum of its events, so a resumed workflow knows what it spent. When a charge
does not fit, the request ends with BUDGET_EXHAUSTED and the customer reads it in their own
language (``budget_exhausted`` in messages.py); an explanation that no longer fits is the
template's, which costs nothing, so a refund already issued is never reported as a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from accord.agents.models import DecisionFacts, Intake, IntakeContext, Language, RoutedModel
from accord.agents.models.base import Model
from accord.agents.models.explanations import explain_facts
from accord.agents.models.intake import detect_language
from accord.agents.models.messages import say
from accord.agents.refund.facts import WorkflowInput
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import (
    ENVELOPE_META_KEY,
)
from accord.runtime.models.budget import UnitBudget
from accord.runtime.models.completion import CompletionRequest, CompletionResponse
from accord.runtime.workflow import NodeContext

UNITS: Final = "units"
TOOL_CALLS: Final = "tool_calls"
TURN_COST: Final[Mapping[str, int]] = {UNITS: 1}  # the orchestrator guard's units_per_turn
CHILD_UNITS: Final = 10  # at most this much of what is left goes to one child
CHILD_TOOL_CALLS: Final = 5
# A child's share of what is left: policy-check and risk-check run in parallel, and the rest
# of the workflow (its explanation) comes after them.
CHILD_SHARES: Final = 3


def language_of(inp: WorkflowInput, ctx: NodeContext) -> Language:
    """The customer's language: intake's reading once it ran, else the first message's."""
    found = ctx.outputs.get("intake")
    if isinstance(found, dict) and found.get("language") in ("zh", "en"):
        return Language(found["language"])
    return detect_language(inp.text) or Language.EN


class RequestBudget(UnitBudget):
    """The request's budget seen from one node attempt: ``spent`` is the workflow's (its log
    plus its running attempts), and a charge is recorded as this attempt's spending."""

    def __init__(self, inp: WorkflowInput, ctx: NodeContext) -> None:
        self._ctx = ctx
        self._inp = inp
        # None: a workflow started before tool calls counted (compat.WORKFLOW_UNCOUNTED_TOOL_CALLS)
        self.tool_calls = inp.tool_calls
        # Not UnitBudget.__init__: it would set ``spent`` (to 0), i.e. record a negative charge.
        self.units = inp.units
        self.deadline = None

    @property
    def spent(self) -> int:
        return self._ctx.tally.total(UNITS)

    @spent.setter
    def spent(self, value: int) -> None:
        # UnitBudget.charge adds to ``spent``: the difference is this attempt's spending.
        self._ctx.spend(UNITS, value - self._ctx.tally.total(UNITS))

    @property
    def tool_calls_left(self) -> int | None:
        if self.tool_calls is None:
            return None
        return max(0, self.tool_calls - self._ctx.tally.total(TOOL_CALLS))

    def exhausted(self, what: str, details: Mapping[str, Any] | None = None) -> AccordError:
        """BUDGET_EXHAUSTED, said to the customer in their language."""
        language = language_of(self._inp, self._ctx)
        return AccordError(
            ErrorCode.BUDGET_EXHAUSTED,
            say("budget_exhausted", language, spent=self.spent, units=self.units),
            {
                "needed": what,
                "units": self.units,
                "spent": self.spent,
                "remaining": self.remaining,
                "tool_calls": self.tool_calls,
                "tool_calls_spent": self._ctx.tally.total(TOOL_CALLS),
                **(details or {}),
            },
        )

    def charge_tool_call(self, tool: str) -> None:
        """One tool call, before it is made; BUDGET_EXHAUSTED (and no call) if none is left."""
        left = self.tool_calls_left
        if left is not None and left < 1:
            raise self.exhausted("tool_call", {"tool": tool})
        self._ctx.spend(TOOL_CALLS, 1)

    def give_back_tool_call(self) -> None:
        """A charged call that provably never left (accord.protocol.sent): nothing was called.
        A server killed again and again must not use up a request that has not been served."""
        self._ctx.spend(TOOL_CALLS, -1)

    # -- children -------------------------------------------------------------------------------
    def grant(self, child: str) -> tuple[int, int]:
        """The (units, tool calls) a child's envelope gets, reserved until it reports back."""
        units = min(CHILD_UNITS, self.remaining, max(1, self.remaining // CHILD_SHARES))
        if units < 1:
            raise self.exhausted("child_turn", {"child": child})
        left = self.tool_calls_left
        calls = CHILD_TOOL_CALLS if left is None else min(CHILD_TOOL_CALLS, left)
        self._ctx.spend(UNITS, units)
        self._ctx.spend(TOOL_CALLS, calls)
        return units, calls

    def reserve(self, units: int, calls: int) -> tuple[int, int]:
        """Reserve what a child's follow-up turn may still spend of its grant (what is left of
        the request, at most): BUDGET_EXHAUSTED if not even one turn fits."""
        units = min(units, self.remaining)
        if units < 1:
            raise self.exhausted("child_turn")
        left = self.tool_calls_left
        calls = max(0, calls if left is None else min(calls, left))
        self._ctx.spend(UNITS, units)
        self._ctx.spend(TOOL_CALLS, calls)
        return units, calls

    def settle(self, reserved: tuple[int, int], reported: tuple[int, int]) -> None:
        """Replace a child's reservation by what it reports it spent (nothing, when the turn
        provably never reached the child)."""
        self._ctx.spend(UNITS, reported[0] - reserved[0])
        self._ctx.spend(TOOL_CALLS, reported[1] - reserved[1])


def child_grant(metadata: Mapping[str, Any]) -> tuple[int, int]:
    """The (units, tool calls) of the envelope a child task was given at its first turn."""
    envelope = metadata.get(ENVELOPE_META_KEY)
    budget = envelope.get("budget") if isinstance(envelope, Mapping) else None
    if not isinstance(budget, Mapping):
        return (0, 0)
    units, calls = budget.get("units", 0), budget.get("tool_calls", 0)
    return (
        int(units) if isinstance(units, int | float) else 0,
        int(calls) if isinstance(calls, int | float) else 0,
    )


class BudgetedModel(Model):
    """The routed model of one node attempt: BUDGET_EXHAUSTED is said in the customer's
    language, and an explanation that no longer fits is the template's (no call, no cost)."""

    def __init__(self, routed: RoutedModel, budget: RequestBudget) -> None:
        self.routed = routed
        self.budget = budget

    @property
    def name(self) -> str:
        return self.routed.name

    async def understand(self, text: str, *, context: IntakeContext | None = None) -> Intake:
        try:
            return await self.routed.understand(text, context=context)
        except AccordError as error:
            raise self._said(error) from None

    async def explain(self, facts: DecisionFacts) -> str:
        try:
            return await self.routed.explain(facts)
        except AccordError as error:
            if error.code is not ErrorCode.BUDGET_EXHAUSTED:
                raise
            return explain_facts(facts)

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        try:
            return await self.routed.complete(request)
        except AccordError as error:
            raise self._said(error) from None

    def _said(self, error: AccordError) -> AccordError:
        if error.code is not ErrorCode.BUDGET_EXHAUSTED:
            return error
        return self.budget.exhausted("model_call", error.details)
