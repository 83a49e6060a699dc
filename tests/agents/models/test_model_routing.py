"""Routing: the five cases of the cost/cache/fallback background text, and the rules around them."""

from __future__ import annotations

import pytest

from accord.agents.models import (
    DecisionFacts,
    Language,
    OfflineModel,
    Outcome,
    Router,
    estimate_complexity,
)
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.runtime.models import (
    AnswerCache,
    CacheScope,
    Complexity,
    Costs,
    Metrics,
    ModelRoute,
    Tier,
    UnitBudget,
    Versions,
    choose_route,
)

from .scripted import Scripted

T = ErrorCode.RETRYABLE_TIMEOUT
SCOPE = CacheScope.tenant("demo", "u1")


def make_router(fast: Scripted, deep: Scripted, **kw: object) -> Router:
    return Router(fast, deep, costs=Costs(fast=1, deep=3), **kw)  # type: ignore[arg-type]


async def test_the_five_cases() -> None:
    """flow06.py's samples: first call; cache hit; deep fails -> fast (both cost); fast fails
    with nothing left for a fallback; zero budget and a new question."""
    fast = Scripted("fast", fail={"新问题": T})
    deep = Scripted("deep", fail={"比较RAG和记忆": T})
    router = make_router(fast, deep)
    samples = [
        ("RAG是什么？", 1),
        ("RAG是什么？", 0),
        ("比较RAG和记忆", 4),
        ("新问题", 1),
        ("零预算新问题", 0),
    ]
    rows = []
    for text, units in samples:
        budget = UnitBudget(units)
        routed = await router.understand(text, budget=budget, scope=SCOPE)
        rows.append(routed)
        assert budget.spent == routed.record.units <= units  # never spend past the budget

    first, hit, fallback, no_room, zero = (r.record for r in rows)
    assert (first.route, first.status, first.units, first.calls) == (
        ModelRoute.FAST,
        Status.COMPLETED,
        1,
        1,
    )
    hit_is = (hit.route, hit.status, hit.units, hit.calls)
    assert hit_is == (ModelRoute.CACHE, Status.COMPLETED, 0, 0)
    assert (fallback.route, fallback.fallback, fallback.units, fallback.calls) == (
        ModelRoute.DEEP,
        True,
        4,
        2,
    )
    assert fallback.status is Status.COMPLETED
    assert fallback.model == fast.name
    assert (no_room.status, no_room.error, no_room.calls, no_room.units) == (
        Status.FAILED,
        ErrorCode.BUDGET_EXHAUSTED,
        1,
        1,
    )
    assert (zero.route, zero.status, zero.error, zero.calls, zero.units) == (
        ModelRoute.NONE,
        Status.FAILED,
        ErrorCode.BUDGET_EXHAUSTED,
        0,
        0,
    )
    assert deep.calls == ["比较RAG和记忆"]
    assert fast.calls == ["RAG是什么？", "比较RAG和记忆", "新问题"]

    with pytest.raises(AccordError) as err:
        rows[3].unwrap()
    assert err.value.code is ErrorCode.BUDGET_EXHAUSTED
    assert err.value.details["after"] == T.value
    assert err.value.details["calls"] == 1

    # Another user's identical question is a new call, not the first user's cached answer.
    other = await router.understand(
        "RAG是什么？", budget=UnitBudget(1), scope=CacheScope.tenant("demo", "another-user")
    )
    assert (other.record.route, other.record.calls) == (ModelRoute.FAST, 1)

    snap = router.metrics.snapshot()
    assert snap["samples"] == 6
    assert snap["success_rate"] == pytest.approx(4 / 6)  # budget-exhausted runs count
    assert (snap["total_units"], snap["total_calls"]) == (7, 5)


async def test_a_hanging_deep_call_times_out_and_falls_back() -> None:
    deep = Scripted("deep", hang={"compare A and B, O-1 broken"})
    fast = Scripted("fast")
    router = Router(Tier(fast), Tier(deep, timeout_s=0.2), costs=Costs(fast=1, deep=3))
    routed = await router.understand(
        "compare A and B, O-1 broken", budget=UnitBudget(4), scope=SCOPE
    )
    assert routed.unwrap().order_id == "O-1"
    assert (routed.record.route, routed.record.fallback, routed.record.units) == (
        ModelRoute.DEEP,
        True,
        4,
    )


@pytest.mark.parametrize(
    "code",
    [
        ErrorCode.UNAUTHENTICATED,
        ErrorCode.PERMISSION_DENIED,
        ErrorCode.INVALID_INPUT,
        ErrorCode.RATE_LIMITED,
        ErrorCode.UNAVAILABLE,
        ErrorCode.CONTRACT_VIOLATION,
    ],
)
async def test_only_timeouts_fall_back(code: ErrorCode) -> None:
    text = "compare these: O-1 is broken"
    deep, fast = Scripted("deep", fail={text: code}), Scripted("fast")
    router = make_router(fast, deep)
    budget = UnitBudget(10)
    routed = await router.understand(text, budget=budget, scope=SCOPE)
    assert routed.error is not None
    assert routed.error.code is code
    assert (routed.record.calls, routed.record.units, routed.record.fallback) == (1, 3, False)
    assert fast.calls == []
    assert budget.spent == 3


async def test_a_failed_fallback_fails_the_run_and_costs_both() -> None:
    text = "compare: O-1 broken"
    deep, fast = Scripted("deep", fail={text: T}), Scripted("fast", fail={text: T})
    router = make_router(fast, deep)
    routed = await router.understand(text, budget=UnitBudget(10), scope=SCOPE)
    assert routed.error is not None
    assert routed.error.code is T
    assert (routed.record.calls, routed.record.units, routed.record.fallback) == (2, 4, True)
    again = await router.understand(text, budget=UnitBudget(10), scope=SCOPE)
    assert again.record.route is ModelRoute.DEEP  # failures are never cached


async def test_a_crashing_provider_is_internal_without_its_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fast = Scripted("fast", crash={"O-1 broken"})
    router = make_router(fast, fast)
    routed = await router.understand("O-1 broken", budget=UnitBudget(1), scope=SCOPE)
    assert routed.error is not None
    assert routed.error.code is ErrorCode.INTERNAL
    assert "secret stack detail" not in str(routed.error.to_dict())


def test_route_choice_happens_before_the_call() -> None:
    costs = Costs(fast=1, deep=3)
    assert choose_route(Complexity.COMPLEX, UnitBudget(4), costs) is ModelRoute.DEEP
    # no room for a fallback:
    assert choose_route(Complexity.COMPLEX, UnitBudget(3), costs) is ModelRoute.FAST
    assert choose_route(Complexity.COMPLEX, UnitBudget(3), costs, reserve_fallback=False) is (
        ModelRoute.DEEP
    )
    assert choose_route(Complexity.SIMPLE, UnitBudget(100), costs) is ModelRoute.FAST
    assert choose_route(Complexity.SIMPLE, UnitBudget(0), costs) is ModelRoute.NONE
    assert choose_route(Complexity.COMPLEX, UnitBudget(10, spent=10), costs) is ModelRoute.NONE


@pytest.mark.parametrize(
    ("text", "complexity"),
    [
        ("鞋码不合适，订单 O-1001", Complexity.SIMPLE),
        ("my mug arrived broken, order O-1005", Complexity.SIMPLE),
        ("比较RAG和记忆", Complexity.COMPLEX),
        ("O-1001 and O-1002 are broken", Complexity.COMPLEX),
        ("it's too small and the box was damaged, O-1", Complexity.COMPLEX),
        ("refund " * 60, Complexity.COMPLEX),
    ],
)
def test_complexity_estimate(text: str, complexity: Complexity) -> None:
    assert estimate_complexity(text) is complexity


async def test_costs_are_configurable() -> None:
    fast, deep = Scripted("fast"), Scripted("deep")
    router = Router(fast, deep, costs=Costs(fast=2, deep=4))
    budget = UnitBudget(6)
    routed = await router.understand("compare O-1 and O-2", budget=budget, scope=SCOPE)
    assert (routed.record.route, routed.record.units, budget.remaining) == (ModelRoute.DEEP, 4, 2)


async def test_oversized_text_is_a_failed_run_without_a_call() -> None:
    fast = Scripted("fast")
    router = make_router(fast, fast)
    routed = await router.understand("x" * 20_000, budget=UnitBudget(5), scope=SCOPE)
    assert routed.error is not None
    assert routed.error.code is ErrorCode.PAYLOAD_TOO_LARGE
    assert (routed.record.calls, routed.record.route, fast.calls) == (0, ModelRoute.NONE, [])


async def test_a_passed_deadline_makes_no_call() -> None:
    from datetime import UTC, datetime, timedelta

    fast = Scripted("fast")
    router = make_router(fast, fast)
    budget = UnitBudget(5, deadline=datetime.now(UTC) - timedelta(seconds=1))
    routed = await router.understand("O-1 broken", budget=budget, scope=SCOPE)
    assert routed.error is not None
    assert routed.error.code is ErrorCode.RETRYABLE_TIMEOUT
    assert fast.calls == []
    assert budget.spent == 0


async def test_bound_model_for_a_workflow_node() -> None:
    router = Router(OfflineModel(), costs=Costs(fast=1, deep=3), metrics=Metrics())
    model = router.bind(budget=UnitBudget(2), scope=SCOPE, versions=Versions(policy="p7"))
    intake = await model.understand("鞋码不合适，想退款，订单 O-1001")
    assert intake.order_id == "O-1001"
    text = await model.explain(
        DecisionFacts(outcome=Outcome.REFUNDED, language=Language.ZH, order_id="O-1001")
    )
    assert "O-1001" in text
    assert [r.units for r in model.records] == [1, 1]
    assert model.budget.remaining == 0
    with pytest.raises(AccordError) as err:
        await model.understand("my mug arrived broken, order O-1005")
    assert err.value.code is ErrorCode.BUDGET_EXHAUSTED
    # A repeat is a cache hit: zero units even with nothing left.
    assert (await model.understand("鞋码不合适，想退款，订单 O-1001")).order_id == "O-1001"
    assert model.records[-1].route is ModelRoute.CACHE


async def test_model_change_is_a_new_cache_key() -> None:
    cache = AnswerCache()
    a = Router(Scripted("a"), cache=cache)
    b = Router(Scripted("b"), cache=cache)
    await a.understand("O-1 broken", budget=UnitBudget(1), scope=SCOPE)
    routed = await b.understand("O-1 broken", budget=UnitBudget(1), scope=SCOPE)
    assert routed.record.route is ModelRoute.FAST


async def test_a_fast_timeout_falls_back_to_the_deep_model_not_to_fast_again() -> None:
    """Issue 13: a fallback goes to a different model, never the same one again."""
    text = "O-1 broken"
    fast, deep = Scripted("fast", fail={text: T}), Scripted("deep")
    router = make_router(fast, deep)
    budget = UnitBudget(4)
    routed = await router.understand(text, budget=budget, scope=SCOPE)
    assert routed.unwrap().order_id == "O-1"
    assert (routed.record.route, routed.record.fallback, routed.record.model) == (
        ModelRoute.FAST,
        True,
        deep.name,
    )
    assert (fast.calls, deep.calls) == ([text], [text])
    assert budget.spent == routed.record.units == 4  # both calls cost


async def test_a_fallback_needs_budget_for_the_other_model() -> None:
    text = "O-1 broken"
    fast, deep = Scripted("fast", fail={text: T}), Scripted("deep")
    routed = await make_router(fast, deep).understand(text, budget=UnitBudget(3), scope=SCOPE)
    assert routed.error is not None
    assert routed.error.code is ErrorCode.BUDGET_EXHAUSTED
    assert routed.error.details["after"] == T.value
    assert deep.calls == []


async def test_one_model_behind_both_routes_is_not_asked_again() -> None:
    text = "O-1 broken"
    only = Scripted("only", fail={text: T})
    router = Router(only, costs=Costs(fast=1, deep=3))
    budget = UnitBudget(10)
    routed = await router.understand(text, budget=budget, scope=SCOPE)
    assert routed.error is not None
    assert routed.error.code is T
    assert (routed.record.calls, routed.record.fallback, only.calls) == (1, False, [text])
    assert budget.spent == 1
