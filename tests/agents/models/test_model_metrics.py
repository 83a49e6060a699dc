"""Metrics: nearest-rank P95, success rate with budget-exhausted runs, groups, window."""

from __future__ import annotations

import json
import math

import pytest

from accord.agents.models import Router
from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.runtime.models import Metrics, ModelRoute, RunRecord, UnitBudget, nearest_rank
from accord.runtime.models.cache import CacheScope

from .scripted import Scripted


def record(
    latency: float,
    route: ModelRoute = ModelRoute.FAST,
    *,
    ok: bool = True,
    at: float = 0.0,
    units: int = 1,
    calls: int = 1,
) -> RunRecord:
    return RunRecord(
        task="intake",
        route=route,
        status=Status.COMPLETED if ok else Status.FAILED,
        error=None if ok else ErrorCode.BUDGET_EXHAUSTED,
        units=units,
        calls=calls,
        latency_ms=latency,
        at=at,
    )


@pytest.mark.parametrize(
    ("values", "p95"),
    [
        ([5.0], 5.0),
        ([1.0, 2.0], 2.0),
        (list(range(1, 21)), 19),  # ceil(0.95*20) = 19th smallest
        (list(range(1, 101)), 95),
        (list(range(100, 0, -1)), 95),  # order does not matter
        (list(range(1, 22)), 20),  # ceil(19.95) = 20
        ([10.0, 1.0, 1000.0, 3.0, 2.0], 1000.0),  # ceil(4.75) = 5th
    ],
)
def test_nearest_rank_p95(values: list[float], p95: float) -> None:
    assert nearest_rank(values) == p95
    ordered = sorted(values)
    assert nearest_rank(values) == ordered[math.ceil(0.95 * len(values)) - 1]


def test_nearest_rank_of_nothing() -> None:
    assert nearest_rank([]) is None
    assert Metrics().snapshot()["success_rate"] is None


def test_success_rate_counts_budget_exhausted_runs() -> None:
    m = Metrics()
    for r in [
        record(1),
        record(2),
        record(0.1, ModelRoute.CACHE, units=0, calls=0),
        record(0.05, ModelRoute.NONE, ok=False, units=0, calls=0),
    ]:
        m.add(r)
    snap = m.snapshot()
    assert snap["samples"] == 4
    assert snap["success_rate"] == 0.75
    assert snap["errors"] == {"BUDGET_EXHAUSTED": 1}
    assert (snap["total_units"], snap["total_calls"]) == (2, 2)


def test_snapshot_groups_by_route_and_status_with_window() -> None:
    m = Metrics()
    m.add(record(10, at=1_700_000_000.0))
    m.add(record(30, at=1_700_000_060.0))
    m.add(record(1, ModelRoute.CACHE, at=1_700_000_030.0, units=0, calls=0))
    m.add(record(2, ModelRoute.NONE, ok=False, at=1_700_000_090.0, units=0, calls=0))
    snap = m.snapshot()
    json.dumps(snap)  # JSON-able as it is
    assert snap["window"] == {
        "first": "2023-11-14T22:13:20.000+00:00",
        "last": "2023-11-14T22:14:50.000+00:00",
    }
    groups = {(g["route"], g["status"]): g for g in snap["by_route_status"]}
    assert set(groups) == {("cache", "completed"), ("fast", "completed"), ("none", "failed")}
    fast = groups[("fast", "completed")]
    assert (fast["samples"], fast["p95_latency_ms"], fast["total_units"]) == (2, 30, 2)
    assert fast["window"]["first"] == "2023-11-14T22:13:20.000+00:00"
    assert groups[("none", "failed")]["success_rate"] == 0.0
    assert "nearest rank" in snap["definition"]


def test_window_is_bounded() -> None:
    m = Metrics(window=3)
    for i in range(5):
        m.add(record(i, at=float(i)))
    assert [r.latency_ms for r in m.records] == [2, 3, 4]


async def test_router_runs_are_timed_and_recorded() -> None:
    clock_values = iter([100.0, 200.0])
    m = Metrics(clock=lambda: next(clock_values))
    router = Router(Scripted("m"), metrics=m)
    scope = CacheScope.tenant("a", "u")
    await router.understand("O-1 broken", budget=UnitBudget(1), scope=scope)
    await router.understand("O-2 broken", budget=UnitBudget(0), scope=scope)
    snap = m.snapshot()
    assert snap["samples"] == 2
    assert snap["success_rate"] == 0.5
    assert all(r.latency_ms >= 0 for r in m.records)
    assert [r.at for r in m.records] == [100.0, 200.0]
