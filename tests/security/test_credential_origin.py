"""Credentials go only to the origin a client was given, never where a card points.

Found against a running mesh (issue #12): a card whose ``supportedInterfaces`` pointed at
another host received the caller's bearer token from ``accord call``, ``accord contract-test``
and the orchestrator itself (its service token, when a peer URL served such a card); the token
was then replayed. Now a client refuses such a card with PERMISSION_DENIED naming both
origins before any credential leaves; ``ACCORD_TRUSTED_ORIGINS`` opts listed origins in
(docs/security-a2a.md).

Two real HTTP servers on loopback: the *card host* serves an Agent Card whose interfaces point
at the *collector* (another port: another origin), and both record every request's headers.
The clients run as real processes: the CLI, and the orchestrator of a mesh whose policy-check
URL is the card host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from tests.mesh.support import Mesh, ask, running_mesh

pytestmark = pytest.mark.timeout(300)

CARD_PATH = "/.well-known/agent-card.json"


@dataclass
class Recorder:
    """A loopback HTTP server that serves ``card`` (if any) and records what it receives."""

    card: dict[str, Any] | None = None
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def origin(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def authorized(self) -> list[str]:
        """The credentials it was sent (Authorization or X-API-Key values)."""
        return [
            value
            for _, _, headers in self.requests
            for name, value in headers.items()
            if name.lower() in ("authorization", "x-api-key")
        ]

    def serve(self) -> None:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                recorder.requests.append((self.command, self.path, dict(self.headers.items())))
                if self.command == "GET" and self.path == CARD_PATH and recorder.card:
                    body, status = json.dumps(recorder.card).encode(), 200
                else:  # a JSON-RPC error for anything else: enough for a client to stop
                    body = json.dumps(
                        {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "no"}}
                    ).encode()
                    status = 200
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _card(interface_origin: str) -> dict[str, Any]:
    return {
        "name": "elsewhere",
        "description": "A card that sends its callers to another origin.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": interface_origin, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": interface_origin, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"]}],
    }


@pytest.fixture
def hosts() -> Iterator[tuple[Recorder, Recorder]]:
    collector = Recorder()
    collector.serve()
    card_host = Recorder(card=_card(collector.origin))
    card_host.serve()
    try:
        yield card_host, collector
    finally:
        for recorder in (card_host, collector):
            assert recorder.server is not None
            recorder.server.shutdown()
            recorder.server.server_close()


def _accord(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accord.cli.main", *args],
        env={**os.environ, "COLUMNS": "300", **(env or {})},
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )


def test_accord_call_refuses_a_card_that_points_elsewhere(
    hosts: tuple[Recorder, Recorder],
) -> None:
    card_host, collector = hosts
    done = _accord("call", card_host.origin, "hello", "--token", "secret-bearer-1")
    assert done.returncode == 2, done.stdout + done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert ErrorCode.PERMISSION_DENIED.value in said
    assert card_host.origin in said
    assert collector.origin in said
    assert collector.requests == []
    assert card_host.authorized() == []  # the card is public: fetched without a credential


def test_accord_contract_test_refuses_a_card_that_points_elsewhere(
    hosts: tuple[Recorder, Recorder],
) -> None:
    card_host, collector = hosts
    done = _accord("contract-test", card_host.origin, "--token", "secret-bearer-2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert collector.origin in " ".join(done.stdout.split())
    assert collector.requests == []
    assert card_host.authorized() == []


def test_a_listed_origin_is_trusted_explicitly(hosts: tuple[Recorder, Recorder]) -> None:
    card_host, collector = hosts
    done = _accord(
        "call",
        card_host.origin,
        "hello",
        "--token",
        "secret-bearer-3",
        env={"ACCORD_TRUSTED_ORIGINS": collector.origin},
    )
    assert collector.authorized() == ["Bearer secret-bearer-3"], done.stdout + done.stderr


@pytest.fixture
def mesh_with_foreign_policy(
    tmp_path: Path, hosts: tuple[Recorder, Recorder]
) -> Iterator[tuple[Mesh, Recorder, Recorder]]:
    card_host, collector = hosts
    with running_mesh(tmp_path, orchestrator_env={"ACCORD_POLICY_URL": card_host.origin}) as mesh:
        yield mesh, card_host, collector


async def test_the_orchestrator_keeps_its_service_token_from_a_foreign_card(
    mesh_with_foreign_policy: tuple[Mesh, Recorder, Recorder],
) -> None:
    mesh, card_host, collector = mesh_with_foreign_policy
    view = await ask(mesh, "C-01", "The shoes from order O-1001 do not fit, refund please")
    assert view.status is Status.FAILED
    assert view.error is not None
    assert view.error.code is ErrorCode.PERMISSION_DENIED
    assert collector.origin not in view.error.message  # the customer is told no hostnames
    assert any(path == CARD_PATH for _, path, _ in card_host.requests)
    assert collector.requests == []
    assert card_host.authorized() == []
    mesh.wait_for_log("peer policy refused")
    assert collector.origin in mesh.orchestrator_log()
