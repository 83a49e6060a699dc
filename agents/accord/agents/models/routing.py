"""The refund assistant's two calls through the framework's router.

:class:`Router` is accord.runtime.models.routing's :class:`CompletionRouter` (cache, budget,
route, fallback, one RunRecord per run) over the refund's :class:`Model`, with ``understand``
and ``explain`` routed like ``complete``, and a complexity estimate that also counts the orders
and reasons a message names. A workflow node binds it to its task's budget and tenant
(:meth:`Router.bind`) and then uses the result like any :class:`Model`.
"""

from __future__ import annotations

from collections.abc import Callable

from accord.agents.models import intake as rules
from accord.agents.models.base import DecisionFacts, Intake, IntakeContext, Model, Task
from accord.contracts.errors import AccordError
from accord.runtime.models.budget import Costs, UnitBudget
from accord.runtime.models.cache import AnswerCache, CacheScope, Versions
from accord.runtime.models.metrics import Metrics
from accord.runtime.models.routing import (
    CompletionRouter,
    Complexity,
    Routed,
    RoutedCompletionModel,
    Tier,
    text_complexity,
)
from accord.runtime.models.text import clean_text, normalize_question


def estimate_complexity(text: str) -> Complexity:
    """A transparent rule, to be checked against real traffic for mis-routing.

    Complex: what the framework's rule finds complex (a comparison, a long text), or several
    orders or several reasons in one message.
    """
    if text_complexity(text) is Complexity.COMPLEX:
        return Complexity.COMPLEX
    clean = clean_text(text)
    if len(rules.find_order_ids(clean)) > 1 or len(rules.find_reasons(clean.casefold())) > 1:
        return Complexity.COMPLEX
    return Complexity.SIMPLE


class Router(CompletionRouter[Model]):
    """The framework's router over the refund's models, estimating with
    :func:`estimate_complexity` unless told otherwise."""

    def __init__(
        self,
        fast: Model | Tier[Model],
        deep: Model | Tier[Model] | None = None,
        *,
        costs: Costs | None = None,
        cache: AnswerCache | None = None,
        metrics: Metrics | None = None,
        reserve_fallback: bool = True,
        estimate: Callable[[str], Complexity] = estimate_complexity,
    ) -> None:
        super().__init__(
            fast,
            deep,
            costs=costs,
            cache=cache,
            metrics=metrics,
            reserve_fallback=reserve_fallback,
            estimate=estimate,
        )

    def bind(
        self, *, budget: UnitBudget, scope: CacheScope, versions: Versions | None = None
    ) -> RoutedModel:
        return RoutedModel(self, budget, scope, versions or Versions())

    async def understand(
        self,
        text: str,
        *,
        context: IntakeContext | None = None,
        budget: UnitBudget,
        scope: CacheScope,
        versions: Versions | None = None,
        complexity: Complexity | None = None,
    ) -> Routed[Intake]:
        try:
            question = normalize_question(text)
        except AccordError as exc:  # oversized text: refused before any call, still a run
            return self.refused(Task.INTAKE.value, exc)
        ctx = (context or IntakeContext()).model_dump_json(exclude_none=True)
        return await self.run(
            Task.INTAKE.value,
            f"{question}\n{ctx}",
            lambda m: m.understand(text, context=context),
            budget=budget,
            scope=scope,
            versions=versions,
            complexity=complexity or (lambda: self.estimate(text)),
        )

    async def explain(
        self,
        facts: DecisionFacts,
        *,
        budget: UnitBudget,
        scope: CacheScope,
        versions: Versions | None = None,
        complexity: Complexity = Complexity.SIMPLE,
    ) -> Routed[str]:
        return await self.run(
            Task.EXPLAIN.value,
            facts.model_dump_json(exclude_none=True),
            lambda m: m.explain(facts),
            budget=budget,
            scope=scope,
            versions=versions,
            complexity=complexity,
        )


class RoutedModel(RoutedCompletionModel, Model):
    """A :class:`Router` bound to one task's budget, tenant scope and versions, used as a
    :class:`Model`: ``complete`` as the framework's, ``understand`` and ``explain`` routed."""

    router: Router

    async def understand(self, text: str, *, context: IntakeContext | None = None) -> Intake:
        return self.keep(
            await self.router.understand(
                text, context=context, budget=self.budget, scope=self.scope, versions=self.versions
            )
        )

    async def explain(self, facts: DecisionFacts) -> str:
        return self.keep(
            await self.router.explain(
                facts, budget=self.budget, scope=self.scope, versions=self.versions
            )
        )
