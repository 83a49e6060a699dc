"""A check: a requirement ID, a short name, and an async function that passes, raises
:class:`~accord.kit.model.Violation`, or raises
:class:`~accord.kit.model.Skipped`.

A check may stand for one check per thing the target claims (each contract version it states):
``expand`` then names them from the context, and each runs as its own check, reported as
``NAME: THING`` (the docs list the check once, by its name).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from accord.contracts.manifest import requirement_ids

C = TypeVar("C")


@dataclass(frozen=True)
class Check(Generic[C]):
    requirement: str
    name: str
    run: Callable[[C], Awaitable[None]]
    expand: Callable[[C], Sequence[Check[C]]] | None = None

    def __post_init__(self) -> None:
        if self.requirement not in requirement_ids():
            raise ValueError(f"check {self.name!r}: {self.requirement} is not in the manifest")

    @property
    def id(self) -> str:
        return f"{self.requirement} {self.name}"


class CheckList(Generic[C]):
    """Checks in the order they run (later checks read what earlier ones observed)."""

    def __init__(self) -> None:
        self.checks: list[Check[C]] = []

    def __call__(
        self, req_id: str, name: str
    ) -> Callable[[Callable[[C], Awaitable[None]]], Callable[[C], Awaitable[None]]]:
        def register(fn: Callable[[C], Awaitable[None]]) -> Callable[[C], Awaitable[None]]:
            self.checks.append(Check(req_id, name, fn))
            return fn

        return register

    def each(
        self, req_id: str, name: str, things: Callable[[C], Sequence[str]]
    ) -> Callable[[Callable[[C, str], Awaitable[None]]], Callable[[C, str], Awaitable[None]]]:
        """Register a check run once per item ``things`` names in the context."""

        def register(
            fn: Callable[[C, str], Awaitable[None]],
        ) -> Callable[[C, str], Awaitable[None]]:
            def expand(ctx: C) -> list[Check[C]]:
                return [
                    Check(req_id, f"{name}: {thing}", _bound(fn, thing)) for thing in things(ctx)
                ]

            async def unexpanded(ctx: C) -> None:  # run_one expands; never called directly
                raise RuntimeError(f"check {name!r} runs once per item")

            self.checks.append(Check(req_id, name, unexpanded, expand))
            return fn

        return register


def _bound(fn: Callable[[C, str], Awaitable[None]], thing: str) -> Callable[[C], Awaitable[None]]:
    async def run(ctx: C) -> None:
        await fn(ctx, thing)

    return run
