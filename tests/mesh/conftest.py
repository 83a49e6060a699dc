"""One mesh (five real processes on free ports, SQLite in a temporary data directory) shared
by the route and CLI tests; crash tests start their own (they kill and restart it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mesh.support import Mesh, running_mesh


@pytest.fixture(scope="session")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("mesh")) as started:
        yield started
