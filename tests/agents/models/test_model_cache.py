"""The answer cache: scope isolation, versions, normalisation, TTL, LRU capacity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from accord.agents.models import Router
from accord.contracts.envelope import Budget, DelegationEnvelope, Tenant
from accord.runtime.models import AnswerCache, CacheScope, ModelRoute, UnitBudget, Versions
from accord.runtime.models.cache import cache_key

from .scripted import Scripted

ALICE = CacheScope.tenant("shop", "alice")
BOB = CacheScope.tenant("shop", "bob")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def ask(router: Router, text: str, scope: CacheScope, **kw: object) -> ModelRoute:
    routed = await router.understand(text, budget=UnitBudget(5), scope=scope, **kw)  # type: ignore[arg-type]
    return routed.record.route


async def test_one_tenant_never_sees_anothers_answer() -> None:
    model = Scripted("m")
    router = Router(model)
    assert await ask(router, "O-1 broken", ALICE) is ModelRoute.FAST
    assert await ask(router, "O-1 broken", ALICE) is ModelRoute.CACHE
    assert await ask(router, "O-1 broken", BOB) is ModelRoute.FAST
    assert (
        await ask(router, "O-1 broken", CacheScope.tenant("other-app", "alice")) is ModelRoute.FAST
    )
    assert len(model.calls) == 3


async def test_a_declared_shared_scope_is_shared() -> None:
    router = Router(Scripted("m"))
    faq = CacheScope.shared("faq")
    assert await ask(router, "how do refunds work?", faq) is ModelRoute.FAST
    assert await ask(router, "how do refunds work?", faq) is ModelRoute.CACHE
    assert await ask(router, "how do refunds work?", ALICE) is ModelRoute.FAST


def test_the_read_checks_the_scope_even_if_keys_collide() -> None:
    cache = AnswerCache()
    cache.put("same-key", ALICE, "alice's answer")
    assert cache.get("same-key", BOB) is None
    assert cache.get("same-key", ALICE) == "alice's answer"


async def test_versions_are_part_of_the_key() -> None:
    router = Router(Scripted("m"))
    await ask(router, "O-1 broken", ALICE, versions=Versions(corpus="c1", policy="p1"))
    assert await ask(router, "O-1 broken", ALICE, versions=Versions(corpus="c2", policy="p1")) is (
        ModelRoute.FAST
    )
    assert await ask(router, "O-1 broken", ALICE, versions=Versions(corpus="c1", policy="p2")) is (
        ModelRoute.FAST
    )
    assert (
        await ask(router, "O-1 broken", ALICE, versions=Versions(strategy="s2")) is ModelRoute.FAST
    )
    assert await ask(router, "O-1 broken", ALICE, versions=Versions(corpus="c1", policy="p1")) is (
        ModelRoute.CACHE
    )


async def test_the_question_is_normalised() -> None:
    router = Router(Scripted("m"))
    await ask(router, "My mug is BROKEN,   order O-1005", ALICE)
    assert await ask(router, "  my mug is broken, order Ｏ－１００５ ", ALICE) is ModelRoute.CACHE
    assert await ask(router, "my\tmug\nis broken, ORDER o-1005", ALICE) is ModelRoute.CACHE
    assert await ask(router, "my mug is broken, order O-1006", ALICE) is ModelRoute.FAST


def test_key_is_stable_and_distinct() -> None:
    v = Versions()
    assert cache_key(ALICE, v, "intake", "q") == cache_key(ALICE, v, "intake", "q")
    assert cache_key(ALICE, v, "intake", "q") != cache_key(ALICE, v, "explain", "q")


def test_ttl_expiry_with_an_injected_clock() -> None:
    clock = Clock()
    cache = AnswerCache(ttl_s=60, clock=clock)
    cache.put("k", ALICE, 1)
    clock.now += 59.9
    assert cache.get("k", ALICE) == 1
    clock.now += 0.1
    assert cache.get("k", ALICE) is None
    assert len(cache) == 0


async def test_expired_answer_costs_a_call_again() -> None:
    clock = Clock()
    model = Scripted("m")
    router = Router(model, cache=AnswerCache(ttl_s=10, clock=clock))
    await ask(router, "O-1 broken", ALICE)
    clock.now += 11
    assert await ask(router, "O-1 broken", ALICE) is ModelRoute.FAST
    assert len(model.calls) == 2


def test_capacity_evicts_the_least_recently_used() -> None:
    cache = AnswerCache(capacity=2)
    cache.put("a", ALICE, "A")
    cache.put("b", ALICE, "B")
    assert cache.get("a", ALICE) == "A"  # a is now the most recent
    cache.put("c", ALICE, "C")
    assert cache.get("b", ALICE) is None
    assert (cache.get("a", ALICE), cache.get("c", ALICE)) == ("A", "C")
    assert len(cache) == 2


def test_zero_capacity_disables_the_cache() -> None:
    cache = AnswerCache(capacity=0)
    cache.put("a", ALICE, "A")
    assert cache.get("a", ALICE) is None


def test_scope_from_an_envelope() -> None:
    env = DelegationEnvelope(
        goal="refund",
        budget=Budget(units=4, tool_calls=3, deadline=datetime.now(UTC) + timedelta(minutes=5)),
        tenant=Tenant(app="shop", user="alice", session="s1"),
    )
    assert CacheScope.of(env) == ALICE
    assert CacheScope.of(env.tenant) == ALICE
