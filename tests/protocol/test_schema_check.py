"""A contract's schema never makes Accord fetch a `$ref` from the network (MCP 2026-07-28:
implementations MUST NOT dereference a network `$ref` by default); local references work."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from accord.protocol.schema_check import CompiledSchema

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server


def test_a_network_ref_is_refused_and_never_fetched(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    schema = {"type": "object", "properties": {"x": {"$ref": f"http://127.0.0.1:{port}/s.json"}}}
    with pytest.raises(ValueError, match="cannot fetch"):
        CompiledSchema(schema)
    # A fetch would have connected (the listener queues it): none did.
    with pytest.raises(BlockingIOError):
        listener.accept()


def test_a_local_ref_is_followed() -> None:
    schema = {"$defs": {"id": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/id"}}}
    compiled = CompiledSchema(schema)
    assert compiled.is_valid({"x": "O-1"})
    assert not compiled.is_valid({"x": 1})
    assert [e.validator for e in compiled.iter_errors({"x": 1})] == ["type"]
