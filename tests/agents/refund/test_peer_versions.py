"""The orchestrator refuses a peer that serves no version of the major it was built against.

A real HTTP server (stdlib, in a thread) serves a real Agent Card built from a contract; the
orchestrator's Peers resolves it exactly as in production."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from google.protobuf import json_format

from accord.agents.refund.peers import Peers
from accord.contracts.agents import AgentContract, agent_contract
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.server.card import build_agent_card


class _CardServer:
    def __init__(self) -> None:
        self.card: dict[str, Any] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps(owner.card).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def serve(self, version: str, also_serves: list[str] | None = None) -> None:
        doc = agent_contract("policy-check").model_dump(mode="json")
        doc.update(version=version, also_serves=also_serves or [])
        card = build_agent_card(AgentContract.model_validate(doc), self.url)
        self.card = json_format.MessageToDict(card)


@pytest.fixture
def policy_card() -> Iterator[_CardServer]:
    server = _CardServer()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


async def _connect(url: str) -> None:
    peers = Peers({"policy": url})
    try:
        client = await peers.client("policy")
        assert client is not None
    finally:
        await peers.aclose()


async def test_a_minor_ahead_is_used(policy_card: _CardServer) -> None:
    policy_card.serve("1.7.0")
    await _connect(policy_card.url)


async def test_a_major_ahead_only_is_refused_naming_both(policy_card: _CardServer) -> None:
    policy_card.serve("2.0.0")
    with pytest.raises(AccordError) as caught:
        await _connect(policy_card.url)
    assert caught.value.code is ErrorCode.VERSION_UNSUPPORTED
    built = agent_contract("policy-check").version
    assert caught.value.details == {"peer": "policy-check", "expected": built, "served": ["2.0.0"]}


async def test_a_peer_serving_both_majors_is_used(policy_card: _CardServer) -> None:
    policy_card.serve("2.0.0", also_serves=["1.0.0"])
    await _connect(policy_card.url)
