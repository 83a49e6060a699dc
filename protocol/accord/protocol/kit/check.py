"""A check: a requirement ID, a short name, and an async function that passes, raises
:class:`~accord.protocol.kit.model.Violation`, or raises
:class:`~accord.protocol.kit.model.Skipped`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from accord.contracts.manifest import requirement_ids

C = TypeVar("C")


@dataclass(frozen=True)
class Check(Generic[C]):
    requirement: str
    name: str
    run: Callable[[C], Awaitable[None]]

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
