"""One real mesh per session (so per xdist worker) for the security tests that only read or
add their own data (refusals, waiting tasks of their own; no refund of a whole order); tests
that need special settings (production mode, other secrets) or count refunds start their own
processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mesh.support import Mesh, running_mesh


@pytest.fixture(scope="session")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("security-mesh")) as started:
        yield started
