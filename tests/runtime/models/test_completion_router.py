"""The framework's router serves an application that is not the refund assistant: its own
model at the completion level, its own task names and its own complexity rule
(accord.runtime.models, docs/models.md)."""

from __future__ import annotations

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status
from accord.runtime.models import (
    MAX_TEXT_CHARS,
    CacheScope,
    CompletionModel,
    CompletionRequest,
    CompletionResponse,
    CompletionRouter,
    Complexity,
    Costs,
    Message,
    ModelRoute,
    Role,
    Tier,
    UnitBudget,
    text_complexity,
)


class Echo(CompletionModel):
    """A provider that answers with the last user message; ``slow`` ones time out."""

    def __init__(self, name: str, *, times_out: bool = False) -> None:
        self._name = name
        self.times_out = times_out
        self.calls = 0

    @property
    def name(self) -> str:
        return f"echo:{self._name}"

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.calls += 1
        if self.times_out:
            raise AccordError(ErrorCode.RETRYABLE_TIMEOUT, "scripted timeout")
        return CompletionResponse(text=request.messages[-1].content, model=self.name)


def ask(text: str, task: str = "summarize") -> CompletionRequest:
    return CompletionRequest(task=task, messages=[Message(role=Role.USER, content=text)])


SCOPE = CacheScope.tenant("help-desk", "ann")


async def test_a_completion_is_routed_cached_and_recorded_under_the_application_s_task() -> None:
    fast = Echo("fast")
    router = CompletionRouter(fast, costs=Costs(fast=1, deep=3))
    budget = UnitBudget(10)
    first = await router.complete(ask("how do I reset my password?"), budget=budget, scope=SCOPE)
    again = await router.complete(ask("how do I reset my password?"), budget=budget, scope=SCOPE)
    assert first.unwrap().text == again.unwrap().text == "how do I reset my password?"
    assert (first.record.task, first.record.route, first.record.units) == (
        "summarize",
        ModelRoute.FAST,
        1,
    )
    assert (again.record.route, again.record.units, fast.calls) == (ModelRoute.CACHE, 0, 1)
    assert budget.remaining == 9


async def test_the_application_s_complexity_rule_picks_the_deep_route() -> None:
    fast, deep = Echo("fast"), Echo("deep")
    router = CompletionRouter(
        fast,
        deep,
        costs=Costs(fast=1, deep=3),
        estimate=lambda text: Complexity.COMPLEX if "ticket" in text else Complexity.SIMPLE,
    )
    routed = await router.complete(ask("merge ticket 7 into 9"), budget=UnitBudget(4), scope=SCOPE)
    assert (routed.record.route, deep.calls, fast.calls) == (ModelRoute.DEEP, 1, 0)
    assert text_complexity("merge ticket 7 into 9") is Complexity.SIMPLE  # the default's view


async def test_a_timeout_falls_back_to_the_other_model_and_both_calls_are_charged() -> None:
    fast, deep = Echo("fast", times_out=True), Echo("deep")
    router = CompletionRouter(Tier(fast), Tier(deep), costs=Costs(fast=1, deep=3))
    budget = UnitBudget(10)
    routed = await router.complete(ask("hello"), budget=budget, scope=SCOPE)
    assert routed.unwrap().model == "echo:deep"
    assert (routed.record.fallback, routed.record.calls, routed.record.units) == (True, 2, 4)


async def test_no_call_without_budget_and_none_for_an_oversized_text() -> None:
    fast = Echo("fast")
    router = CompletionRouter(fast, costs=Costs(fast=2, deep=3))
    poor = await router.complete(ask("hello"), budget=UnitBudget(1), scope=SCOPE)
    assert poor.error is not None
    assert poor.error.code is ErrorCode.BUDGET_EXHAUSTED
    huge = await router.complete(ask("x" * (MAX_TEXT_CHARS + 1)), budget=UnitBudget(9), scope=SCOPE)
    assert huge.error is not None
    assert huge.error.code is ErrorCode.PAYLOAD_TOO_LARGE
    assert (huge.record.status, huge.record.route, fast.calls) == (
        Status.FAILED,
        ModelRoute.NONE,
        0,
    )


async def test_a_bound_router_is_a_completion_model_that_keeps_its_records() -> None:
    router = CompletionRouter(Echo("fast"))
    model = router.bind(budget=UnitBudget(5), scope=SCOPE)
    assert isinstance(model, CompletionModel)
    assert (await model.complete(ask("hi", task="chat"))).text == "hi"
    assert [r.task for r in model.records] == ["chat"]
