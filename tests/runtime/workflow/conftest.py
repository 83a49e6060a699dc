"""Fixtures for the workflow runtime tests: every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from accord.runtime.workflow import Graph, Runtime


@pytest.fixture(params=["sqlite", "postgres"])
def log_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'workflows.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


RuntimeFactory = Callable[..., Awaitable[Runtime]]


@pytest.fixture
async def make_runtime(log_url: str) -> AsyncIterator[RuntimeFactory]:
    """Open runtimes on the test's database; all are closed at the end."""
    opened: list[Runtime] = []

    async def make(*graphs: Graph, **options: object) -> Runtime:
        options.setdefault("auto_recover", False)
        runtime = Runtime(log_url, **options)  # type: ignore[arg-type]
        for graph in graphs:
            runtime.register(graph)
        await runtime.open()
        opened.append(runtime)
        return runtime

    yield make
    for runtime in opened:
        await runtime.close()
