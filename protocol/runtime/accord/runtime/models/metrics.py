"""Run records and honest aggregates.

Definitions (also in docs/models.md):
- success rate = completed runs / all runs; runs refused for budget (BUDGET_EXHAUSTED) and runs
  answered from the cache are runs, so they are in the denominator.
- latency = time.perf_counter() from the start of a run (before the cache lookup) to its end,
  in milliseconds; P95 is the nearest rank: the ceil(0.95 * n)-th smallest sample.
- units and calls are summed as charged: a failed call and a fallback call both count.
Every aggregate names its sample count and its window (first and last run timestamps), and
groups by route and status, because a low latency may only mean cache hits or early failures.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.protocol.telemetry import instruments
from accord.protocol.telemetry.spans import ERROR_TYPE, STATUS

DEFAULT_WINDOW: Final = 10_000
DEFINITION: Final = (
    "success_rate = completed / all runs (budget-exhausted included); "
    "p95 = nearest rank ceil(0.95*n) of perf_counter latencies; units are abstract call units"
)


class ModelRoute(StrEnum):
    CACHE = "cache"
    FAST = "fast"
    DEEP = "deep"
    NONE = "none"  # no call was made (budget, deadline)


class RunRecord(BaseModel):
    """One routed request, whatever happened to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    route: ModelRoute
    status: Status  # completed or failed
    error: ErrorCode | None = None
    units: int
    calls: int
    fallback: bool = False
    model: str | None = None  # the model whose answer was used
    latency_ms: float
    at: float  # wall-clock seconds since the epoch at the end of the run


def nearest_rank(values: Iterable[float], q: float = 0.95) -> float | None:
    """The ceil(q*n)-th smallest value (1-based), or None for no samples."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def summarize(records: Sequence[RunRecord]) -> dict[str, Any]:
    """The aggregate of some runs as a JSON-able dict."""
    n = len(records)
    completed = sum(r.status is Status.COMPLETED for r in records)
    p95 = nearest_rank(r.latency_ms for r in records)
    errors: dict[str, int] = {}
    for r in records:
        if r.error is not None:
            errors[r.error.value] = errors.get(r.error.value, 0) + 1
    return {
        "samples": n,
        "success_rate": completed / n if n else None,
        "p95_latency_ms": round(p95, 3) if p95 is not None else None,
        "total_units": sum(r.units for r in records),
        "total_calls": sum(r.calls for r in records),
        "fallbacks": sum(r.fallback for r in records),
        "errors": dict(sorted(errors.items())),
        "window": _window(records),
    }


class Metrics:
    """Keeps the last ``window`` run records (a bounded deque) and aggregates them."""

    def __init__(
        self, *, window: int = DEFAULT_WINDOW, clock: Callable[[], float] = time.time
    ) -> None:
        self._records: deque[RunRecord] = deque(maxlen=window)
        self.clock = clock

    def add(self, record: RunRecord) -> None:
        self._records.append(record)
        export(record)

    @property
    def records(self) -> list[RunRecord]:
        return list(self._records)

    def clear(self) -> None:
        self._records.clear()

    def snapshot(self) -> dict[str, Any]:
        """Totals, then one row per (route, status); JSON-able (``accord stats`` prints it)."""
        records = self.records
        groups: dict[tuple[str, str], list[RunRecord]] = {}
        for r in records:
            groups.setdefault((r.route.value, r.status.value), []).append(r)
        return {
            **summarize(records),
            "by_route_status": [
                {"route": route, "status": status, **summarize(rows)}
                for (route, status), rows in sorted(groups.items())
            ],
            "definition": DEFINITION,
        }


def export(record: RunRecord) -> None:
    """The run in the process's OpenTelemetry metrics (no-op unless an exporter is configured):
    runs by route and status, budget units spent, calls made, cache hits, latency."""
    measured: dict[str, str] = {
        "accord.model.route": record.route.value,
        STATUS: record.status.value,
    }
    if record.error is not None:
        measured[ERROR_TYPE] = record.error.value
    instruments.model_runs.add(1, measured)
    instruments.model_duration.record(record.latency_ms / 1000, measured)
    if record.units:
        instruments.model_units.add(record.units, measured)
    if record.calls:
        instruments.model_calls.add(record.calls, measured)
    if record.route is ModelRoute.CACHE:
        instruments.model_cache_hits.add(1, {"accord.model.route": record.route.value})


def _window(records: Sequence[RunRecord]) -> dict[str, str | None]:
    if not records:
        return {"first": None, "last": None}
    stamps = [r.at for r in records]
    return {"first": _iso(min(stamps)), "last": _iso(max(stamps))}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
