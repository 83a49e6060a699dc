"""Which member may import which: the siblings each pyproject.toml declares, and no other.

deptry checks third-party imports against each member's declarations (``make deps``), but the
members share the ``accord`` namespace, which it sees as one local package; this test does that
part: ``accord.contracts`` imports nothing of ours, ``accord.kit`` only the contract (a team
that installs the kit alone has nothing else), and so on up the layers.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Member (its package under ``accord``, its distribution ``accord-<member>`` with ``-`` for
# ``_``) -> its folder.
MEMBERS = {
    "contracts": "contracts",
    "refund_contracts": "contracts/refund",
    "protocol": "protocol",
    "kit": "protocol/kit",
    "runtime": "protocol/runtime",
    "cli": "protocol/cli",
    "tools": "tools",
    "agents": "agents",
}


def declared_siblings(member: str) -> set[str]:
    text = (ROOT / MEMBERS[member] / "pyproject.toml").read_text()
    project = tomllib.loads(text)["project"]
    return {
        d.removeprefix("accord-").replace("-", "_")
        for d in project["dependencies"]
        if d.startswith("accord-")
    }


def imported_siblings(member: str) -> dict[str, set[str]]:
    """``accord.<member>`` packages imported, each with the files that import it."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / MEMBERS[member] / "accord").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                parts = name.split(".")
                if parts[0] == "accord" and len(parts) > 1 and parts[1] != member:
                    found.setdefault(parts[1], set()).add(str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("member", MEMBERS)
def test_a_member_imports_exactly_the_siblings_it_declares(member: str) -> None:
    imported = imported_siblings(member)
    undeclared = {
        name: files for name, files in imported.items() if name not in declared_siblings(member)
    }
    assert undeclared == {}
    assert declared_siblings(member) == set(imported)


def test_the_contract_imports_nothing_of_ours() -> None:
    assert declared_siblings("contracts") == set()
    assert imported_siblings("contracts") == {}


def test_an_application_s_contracts_import_only_the_framework_s() -> None:
    assert declared_siblings("refund_contracts") == {"contracts"}
    assert set(imported_siblings("refund_contracts")) == {"contracts"}


def test_the_kit_imports_only_the_contract() -> None:
    assert declared_siblings("kit") == {"contracts"}
    assert set(imported_siblings("kit")) == {"contracts"}


def test_the_runtime_imports_only_the_framework() -> None:
    """The workflow runtime is the framework's: an application's agents run on it, so it may
    not import one (accord.agents, accord.tools, accord.refund_contracts)."""
    assert declared_siblings("runtime") == {"contracts", "protocol"}
    assert set(imported_siblings("runtime")) == {"contracts", "protocol"}


def test_the_cli_imports_only_the_framework() -> None:
    """The `accord` command is the framework's: an application plugs its commands and its app
    file in through entry points (accord.protocol.plugins), never by being imported."""
    assert declared_siblings("cli") == {"contracts", "protocol", "kit"}
    assert set(imported_siblings("cli")) == {"contracts", "protocol", "kit"}


def test_every_workspace_member_is_checked() -> None:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert root["tool"]["uv"]["workspace"]["members"] == list(MEMBERS.values())
