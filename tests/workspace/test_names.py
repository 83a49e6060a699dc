"""One name, one meaning: no class (or module-level type alias) name is defined twice in the
product packages. Two ``TaskView`` or four ``Outcome`` each meaning something else make a reader
(and a wrong import the type checker accepts) guess which one a file means (issue 31).

A name that must be defined twice goes in ``ALLOWED`` with the reason; there is none today.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = (
    "contracts",
    "contracts/refund",
    "protocol",
    "protocol/kit",
    "protocol/runtime",
    "protocol/cli",
    "tools",
    "agents",
)
ALLOWED: Final[dict[str, str]] = {}  # name -> why it may be defined more than once


def _product_files() -> Iterator[Path]:
    for member in MEMBERS:
        for path in sorted((ROOT / member / "accord").rglob("*.py")):
            if "migrations" not in path.relative_to(ROOT).parts:
                yield path


def _type_alias(node: ast.stmt) -> str | None:
    """``Observer = Callable[...]``, ``Outcome = A | B``: a module-level CapWords assignment."""
    target = (
        node.targets[0]
        if isinstance(node, ast.Assign) and len(node.targets) == 1
        else node.target
        if isinstance(node, ast.AnnAssign)
        else None
    )
    if not isinstance(target, ast.Name):
        return None
    name = target.id
    return name if name[:1].isupper() and not name.isupper() and "_" not in name else None


def defined_names() -> dict[str, list[str]]:
    """Each class and type alias name with where it is defined (``path:line``)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in _product_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{where}:{node.lineno}")
        for stmt in tree.body:
            alias = _type_alias(stmt)
            if alias is not None:
                found[alias].append(f"{where}:{stmt.lineno}")
    return found


def test_no_name_is_defined_twice() -> None:
    twice = {
        name: places
        for name, places in defined_names().items()
        if len(places) > 1 and name not in ALLOWED
    }
    assert twice == {}, "rename one, or merge them if they are one concept"


def test_the_allow_list_holds_only_names_still_defined_twice() -> None:
    names = defined_names()
    assert [n for n in ALLOWED if len(names.get(n, [])) < 2] == []


def test_the_scan_finds_what_it_looks_for() -> None:
    names = defined_names()
    assert len(names["TaskView"]) == 1  # the A2A client's (docs/a2a-client.md)
    assert len(names["Observer"]) == 1  # a type alias
