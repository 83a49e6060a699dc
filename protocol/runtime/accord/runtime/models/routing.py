"""Resource-aware routing of completions: cache first, then budget, then capability.

One run, in order (every run ends in exactly one RunRecord in the metrics):

    1. cache    same scope + versions + task + normalised question -> answer; 0 units, 0 calls
    2. deadline the budget's deadline has passed -> RETRYABLE_TIMEOUT, no call
    3. route    chosen BEFORE the call from the complexity estimate and the remaining units:
                complex and remaining >= deep + fast (room for a fallback) -> deep;
                else remaining >= fast -> fast; else BUDGET_EXHAUSTED, no call
    4. call     the route's cost is charged first; a failed call is not given back
    5. fallback only on RETRYABLE_TIMEOUT, one call on the OTHER route (deep -> fast, fast ->
                deep), only if a different model serves it (never the same model again) and
                only if the remaining units cover it (else BUDGET_EXHAUSTED); UNAUTHENTICATED,
                PERMISSION_DENIED, INVALID_INPUT and every other code fail the run as they are
    6. cache    a completed answer is stored under the run's scope

:class:`CompletionRouter` routes ``complete``; an application routes its own calls through
:meth:`CompletionRouter.run` (a subclass, typed by the models it routes). A workflow node binds
a router to its task's budget and tenant (:meth:`CompletionRouter.bind`) and then uses the
result like any :class:`CompletionModel`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Final, Generic, TypeVar, cast

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.runtime.models.budget import Costs, UnitBudget
from accord.runtime.models.cache import AnswerCache, CacheScope, Versions, cache_key
from accord.runtime.models.completion import (
    CompletionModel,
    CompletionRequest,
    CompletionResponse,
    Role,
)
from accord.runtime.models.metrics import Metrics, ModelRoute, RunRecord
from accord.runtime.models.text import clean_text

T = TypeVar("T")
M = TypeVar("M", bound=CompletionModel)
log = logging.getLogger(__name__)

LONG_TEXT_CHARS: Final = 280
_COMPARE: Final = re.compile(
    r"比较|对比|区别|还是|\bcompare|\bversus\b|\bvs\.?\s|difference between|which is better"
)


class Complexity(StrEnum):
    SIMPLE = "simple"
    COMPLEX = "complex"


def text_complexity(text: str) -> Complexity:
    """A transparent rule, to be checked against real traffic for mis-routing: a comparison or a
    long text is complex. An application adds its own signs (:class:`CompletionRouter`'s
    ``estimate``)."""
    clean = clean_text(text)
    if len(clean) > LONG_TEXT_CHARS or _COMPARE.search(clean.casefold()):
        return Complexity.COMPLEX
    return Complexity.SIMPLE


def choose_route(
    complexity: Complexity, budget: UnitBudget, costs: Costs, *, reserve_fallback: bool = True
) -> ModelRoute:
    """The route for a run before any call; ModelRoute.NONE when the budget covers no call."""
    deep_needs = costs.deep + (costs.fast if reserve_fallback else 0)
    if complexity is Complexity.COMPLEX and budget.covers(deep_needs):
        return ModelRoute.DEEP
    if budget.covers(costs.fast):
        return ModelRoute.FAST
    return ModelRoute.NONE


@dataclass(frozen=True)
class Tier(Generic[M]):
    """A model on one route, with the router's own deadline for one call (None: the model's)."""

    model: M
    timeout_s: float | None = None


@dataclass(frozen=True)
class Routed(Generic[T]):
    """The answer (or the error) of one run, with its record."""

    value: T | None
    record: RunRecord
    error: AccordError | None = None

    def unwrap(self) -> T:
        if self.error is not None:
            raise self.error
        if self.value is None:  # only a bug could get here: completed runs carry a value
            raise AccordError(ErrorCode.INTERNAL)
        return self.value


@dataclass
class _Run:
    units: int = 0
    calls: int = 0
    fallback: bool = False
    model: str | None = None
    started: float = field(default_factory=time.perf_counter)


class CompletionRouter(Generic[M]):
    def __init__(
        self,
        fast: M | Tier[M],
        deep: M | Tier[M] | None = None,
        *,
        costs: Costs | None = None,
        cache: AnswerCache | None = None,
        metrics: Metrics | None = None,
        reserve_fallback: bool = True,
        estimate: Callable[[str], Complexity] = text_complexity,
    ) -> None:
        self.fast: Tier[M] = fast if isinstance(fast, Tier) else Tier(fast)
        deep = deep if deep is not None else self.fast
        self.deep: Tier[M] = deep if isinstance(deep, Tier) else Tier(deep)
        self.costs = costs or Costs()
        self.cache = cache if cache is not None else AnswerCache()
        self.metrics = metrics if metrics is not None else Metrics()
        self.reserve_fallback = reserve_fallback
        self.estimate = estimate

    @property
    def fingerprint(self) -> str:
        """The models behind the routes; part of every cache key (a model change is a new key)."""
        return f"fast={self.fast.model.name};deep={self.deep.model.name}"

    def bind(
        self, *, budget: UnitBudget, scope: CacheScope, versions: Versions | None = None
    ) -> RoutedCompletionModel:
        """This router as a :class:`CompletionModel` bound to one task's budget and tenant."""
        return RoutedCompletionModel(self, budget, scope, versions or Versions())

    async def complete(
        self,
        request: CompletionRequest,
        *,
        budget: UnitBudget,
        scope: CacheScope,
        versions: Versions | None = None,
        complexity: Complexity | None = None,
    ) -> Routed[CompletionResponse]:
        last_user = next((m.content for m in reversed(request.messages) if m.role is Role.USER), "")
        try:
            clean_text(last_user)  # refuse oversized text before anything else
        except AccordError as exc:
            return self.refused(request.task, exc)
        return await self.run(
            request.task,
            request.model_dump_json(),
            lambda m: m.complete(request),
            budget=budget,
            scope=scope,
            versions=versions,
            complexity=complexity or (lambda: self.estimate(last_user)),
        )

    def refused(self, task: str, error: AccordError) -> Routed[Any]:
        """A run refused before any call (an oversized text): no units, no call, one record."""
        return self._finish(task, _Run(), ModelRoute.NONE, error)

    # -- the one run loop ----------------------------------------------------------------------

    async def run(
        self,
        task: str,
        question: str,
        call: Callable[[M], Awaitable[T]],
        *,
        budget: UnitBudget,
        scope: CacheScope,
        versions: Versions | None = None,
        complexity: Complexity | Callable[[], Complexity] = Complexity.SIMPLE,
    ) -> Routed[T]:
        """Route one request; never raises AccordError (it is in ``Routed.error``).

        ``complexity`` may be a function: it is then estimated only on a cache miss.
        """
        state = _Run()
        v = versions or Versions()
        keyed = v.model_copy(update={"strategy": f"{v.strategy};{self.fingerprint}"})
        key = cache_key(scope, keyed, task, question)
        hit = self.cache.get(key, scope)
        if hit is not None:
            return self._finish(task, state, ModelRoute.CACHE, None, cast(T, hit))
        if budget.expired():
            return self._finish(
                task,
                state,
                ModelRoute.NONE,
                AccordError(
                    ErrorCode.RETRYABLE_TIMEOUT, "the task's deadline has passed; no call was made"
                ),
            )

        estimate = complexity if isinstance(complexity, Complexity) else complexity()
        route = choose_route(estimate, budget, self.costs, reserve_fallback=self.reserve_fallback)
        if route is ModelRoute.NONE:
            return self._finish(
                task, state, route, self._exhausted(budget, self.costs.fast, "fast")
            )
        tier, cost = (
            (self.deep, self.costs.deep)
            if route is ModelRoute.DEEP
            else (self.fast, self.costs.fast)
        )
        try:
            value = await self._call(tier, cost, route, call, budget, state)
        except AccordError as first:
            if first.code is not ErrorCode.RETRYABLE_TIMEOUT:
                return self._finish(task, state, route, first)
            other = self._fallback(route)
            if other is None:  # one model behind both routes: asking it again is no fallback
                return self._finish(task, state, route, first)
            back_tier, back_cost, back_route = other
            if not budget.covers(back_cost):
                exhausted = self._exhausted(budget, back_cost, back_route.value, after=first.code)
                return self._finish(task, state, route, exhausted)
            state.fallback = True
            try:
                value = await self._call(back_tier, back_cost, back_route, call, budget, state)
            except AccordError as second:
                return self._finish(task, state, route, second)
        self.cache.put(key, scope, value)
        return self._finish(task, state, route, None, value)

    def _fallback(self, first: ModelRoute) -> tuple[Tier[M], int, ModelRoute] | None:
        """The other route's tier, when a different model serves it (None: there is none).

        A deep call that timed out falls back to fast; a fast one to deep. The same model is
        never asked again: that is a retry, which is the caller's retry policy, not routing.
        """
        tier, cost, route = (
            (self.fast, self.costs.fast, ModelRoute.FAST)
            if first is ModelRoute.DEEP
            else (self.deep, self.costs.deep, ModelRoute.DEEP)
        )
        used = self.deep if first is ModelRoute.DEEP else self.fast
        if tier.model is used.model or tier.model.name == used.model.name:
            return None
        return tier, cost, route

    async def _call(
        self,
        tier: Tier[M],
        cost: int,
        route: ModelRoute,
        call: Callable[[M], Awaitable[T]],
        budget: UnitBudget,
        state: _Run,
    ) -> T:
        budget.charge(cost, route=route.value)  # before the call: a failed call costs too
        state.units += cost
        state.calls += 1
        state.model = tier.model.name
        timeout = _timeout(tier.timeout_s, budget)
        try:
            async with asyncio.timeout(timeout):
                return await call(tier.model)
        except AccordError:
            raise
        except TimeoutError:
            raise AccordError(
                ErrorCode.RETRYABLE_TIMEOUT,
                "the model did not answer in time",
                {"model": tier.model.name, "timeout_s": timeout},
            ) from None
        except Exception:
            # A provider bug: logged here, and its text never reaches a caller.
            log.exception("model %s failed unexpectedly", tier.model.name)
            raise AccordError(ErrorCode.INTERNAL, details={"model": tier.model.name}) from None

    def _exhausted(
        self, budget: UnitBudget, needed: int, route: str, *, after: ErrorCode | None = None
    ) -> AccordError:
        details: dict[str, Any] = {"route": route, "needed": needed, "remaining": budget.remaining}
        if after is not None:
            details["after"] = after.value
        return AccordError(
            ErrorCode.BUDGET_EXHAUSTED,
            f"a {route} call needs {needed} units; {budget.remaining} remain",
            details,
        )

    def _finish(
        self,
        task: str,
        state: _Run,
        route: ModelRoute,
        error: AccordError | None,
        value: T | None = None,
    ) -> Routed[T]:
        record = RunRecord(
            task=task,
            route=route,
            status=Status.FAILED if error is not None else Status.COMPLETED,
            error=error.code if error is not None else None,
            units=state.units,
            calls=state.calls,
            fallback=state.fallback,
            model=state.model if error is None else None,
            latency_ms=(time.perf_counter() - state.started) * 1000.0,
            at=self.metrics.clock(),
        )
        self.metrics.add(record)
        if error is not None:
            error = AccordError(
                error.code,
                error.message,
                {**error.details, "route": route.value, "units": state.units, "calls": state.calls},
            )
        return Routed(value if error is None else None, record, error)

    async def aclose(self) -> None:
        await self.fast.model.aclose()
        if self.deep.model is not self.fast.model:
            await self.deep.model.aclose()


def _timeout(tier_timeout: float | None, budget: UnitBudget) -> float | None:
    if budget.deadline is None:
        return tier_timeout
    left = max(0.0, (budget.deadline - datetime.now(UTC)).total_seconds())
    return left if tier_timeout is None else min(left, tier_timeout)


class RoutedCompletionModel(CompletionModel):
    """A router bound to one task's budget, tenant scope and versions, used as a
    :class:`CompletionModel`.

    Errors are raised as AccordError (BUDGET_EXHAUSTED included); every run's record is kept in
    ``records`` (and in the router's metrics) for the workflow's usage events.
    """

    def __init__(
        self,
        router: CompletionRouter[Any],
        budget: UnitBudget,
        scope: CacheScope,
        versions: Versions,
    ) -> None:
        self.router = router
        self.budget = budget
        self.scope = scope
        self.versions = versions
        self.records: list[RunRecord] = []

    @property
    def name(self) -> str:
        return f"routed({self.router.fingerprint})"

    def keep(self, routed: Routed[T]) -> T:
        """Record ``routed``'s run and return its value (or raise its error)."""
        self.records.append(routed.record)
        return routed.unwrap()

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        return self.keep(
            await self.router.complete(
                request, budget=self.budget, scope=self.scope, versions=self.versions
            )
        )
