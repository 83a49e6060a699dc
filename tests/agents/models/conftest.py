from __future__ import annotations

from collections.abc import Iterator

import pytest

from .standin import StandIn


@pytest.fixture(scope="module")
def standin_server() -> Iterator[StandIn]:
    server = StandIn()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def standin(standin_server: StandIn) -> StandIn:
    standin_server.reset()
    return standin_server
