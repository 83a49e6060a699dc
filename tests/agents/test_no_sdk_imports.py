"""accord.agents uses the protocol layer, not the SDKs under it: no module under agents/
imports the A2A SDK (``a2a``), the MCP SDK (``mcp``, ``mcp_types``, its HTTP client
``httpx2``) or the web framework (``starlette``); accord.protocol offers what agents need
(task views and a derived task store, route helpers, clients with ``list_tasks``).

One exception, for the web framework only: the web console (``agents/console``) is a web app
of its own that serves pages and static files; it speaks to the orchestrator from the browser,
over the orchestrator's public API, never through an SDK, so it may use starlette for its pages
(and still no A2A or MCP SDK)."""

from __future__ import annotations

import ast
from pathlib import Path

AGENTS = Path(__file__).resolve().parents[2] / "agents" / "accord" / "agents"
SDK_ROOTS = frozenset({"a2a", "mcp", "mcp_types", "httpx2", "starlette"})
WEB_APPS = {"console": frozenset({"starlette"})}  # package -> the SDK roots it may import


def _imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_checker_sees_imports() -> None:
    assert _imported_roots("import mcp.client\nfrom mcp_types import Tool\n") == {
        "mcp",
        "mcp_types",
    }


def test_no_agents_module_imports_a_protocol_sdk() -> None:
    modules = sorted(AGENTS.rglob("*.py"))
    assert len(modules) > 20
    offenders = {
        str(path.relative_to(AGENTS)): sorted(
            _imported_roots(path.read_text())
            & (SDK_ROOTS - WEB_APPS.get(path.relative_to(AGENTS).parts[0], frozenset()))
        )
        for path in modules
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_console_uses_no_protocol_sdk() -> None:
    console = sorted((AGENTS / "console").rglob("*.py"))
    assert console
    for path in console:
        assert not _imported_roots(path.read_text()) & (SDK_ROOTS - WEB_APPS["console"]), path
