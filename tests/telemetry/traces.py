"""Reading what the services exported: one JSON-lines file per process, waited for with a
deadline (a span is written when it ends, a moment after the client has its answer)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accord.protocol.telemetry.files import read_spans

Span = dict[str, Any]


@dataclass
class Traces:
    files: dict[str, Path]  # service -> trace file

    def spans(self, trace_id: str | None = None) -> list[Span]:
        found = [s for path in self.files.values() for s in read_spans(path)]
        return [s for s in found if trace_id is None or s["trace_id"] == trace_id]

    def wait(
        self, trace_id: str, ready: Callable[[list[Span]], bool], deadline_s: float = 20.0
    ) -> list[Span]:
        end = time.monotonic() + deadline_s
        while True:
            found = self.spans(trace_id)
            if ready(found):
                return found
            if time.monotonic() > end:
                names = sorted(f"{s['service']}:{s['name']}" for s in found)
                raise TimeoutError(f"trace {trace_id} incomplete after {deadline_s}s: {names}")
            time.sleep(0.05)  # polling files the services append to, bounded above


def named(found: Iterable[Span], name: str, service: str | None = None) -> list[Span]:
    return [s for s in found if s["name"] == name and (service is None or s["service"] == service)]


def one(found: Iterable[Span], name: str, service: str | None = None) -> Span:
    matches = named(found, name, service)
    assert len(matches) == 1, (name, service, [(s["service"], s["name"]) for s in found])
    return matches[0]


def has(*names: str) -> Callable[[list[Span]], bool]:
    """Ready when every ``service:name`` (or bare name) has at least one span."""

    def ready(found: list[Span]) -> bool:
        seen = {s["name"] for s in found} | {f"{s['service']}:{s['name']}" for s in found}
        return all(n in seen for n in names)

    return ready


def complete_tree(traceparent: str) -> Callable[[list[Span]], bool]:
    """Ready when every span's parent has been written, save the root's (the caller's span).

    A parent ends after its children (a SERVER span after the response it wraps is sent), so a
    reader that only waits for the leaves can see them before the spans above them."""
    caller = traceparent.split("-")[2]

    def ready(found: list[Span]) -> bool:
        ids = {s["span_id"] for s in found}
        return bool(found) and all(s["parent_id"] in ids or s["parent_id"] == caller for s in found)

    return ready


def every(*conditions: Callable[[list[Span]], bool]) -> Callable[[list[Span]], bool]:
    return lambda found: all(condition(found) for condition in conditions)


def ancestors(span: Span, found: Iterable[Span]) -> list[Span]:
    """The chain from ``span``'s parent up to the root (within ``found``)."""
    by_id = {s["span_id"]: s for s in found}
    chain: list[Span] = []
    parent = by_id.get(span["parent_id"] or "")
    while parent is not None:
        chain.append(parent)
        parent = by_id.get(parent["parent_id"] or "")
    return chain


def trace_id_of(traceparent: str) -> str:
    return traceparent.split("-")[1]


def span_id_of(traceparent: str) -> str:
    return traceparent.split("-")[2]


def metric_points(path: Path, name: str) -> list[dict[str, Any]]:
    """Every data point of metric ``name`` in a metrics file (all collections, in order)."""
    points: list[dict[str, Any]] = []
    if not path.exists():
        return points
    for line in path.read_text(encoding="utf-8").splitlines():
        for rm in json.loads(line).get("resource_metrics", []):
            for sm in rm.get("scope_metrics", []):
                for metric in sm.get("metrics", []):
                    if metric.get("name") == name:
                        points.extend(metric.get("data", {}).get("data_points", []))
    return points


def wait_metric(
    path: Path,
    name: str,
    ready: Callable[[list[dict[str, Any]]], bool],
    deadline_s: float = 20.0,
) -> list[dict[str, Any]]:
    """The data points of ``name`` once ``ready`` says so (the reader writes periodically)."""
    end = time.monotonic() + deadline_s
    while True:
        points = metric_points(path, name)
        if ready(points):
            return points
        if time.monotonic() > end:
            raise TimeoutError(f"{name} in {path} not ready after {deadline_s}s: {points[-5:]}")
        time.sleep(0.05)  # polling a file the service appends to, bounded above
