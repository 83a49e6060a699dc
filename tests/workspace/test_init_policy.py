"""One ``__init__.py`` policy for every package of ours (docs/architecture.md):

- a docstring: what the package holds and where;
- for a package with a public API, its names re-exported and listed in ``__all__``: eagerly by
  imports, or lazily (PEP 562) by a ``__getattr__`` over a table of where each name lives, for
  the packages whose import time the command line cannot afford (accord.contracts,
  accord.protocol.a2a);
- nothing else: no class, no function besides that ``__getattr__``, no other state, so that
  importing a package never runs work of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("contracts", "protocol", "tools", "agents")


def _inits() -> list[Path]:
    return sorted(
        p
        for folder in FOLDERS
        for p in (ROOT / folder).rglob("__init__.py")
        if "migrations" not in p.parts and ".venv" not in p.parts
    )


def _breaches(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [] if ast.get_docstring(tree) else ["no docstring"]
    for node in tree.body[1:] if ast.get_docstring(tree) else tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            continue  # the lazy packages' names, for type checkers
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            name = ast.unparse(target)
            if name == "__all__" or name.startswith("_"):  # __all__, or the lazy table
                continue
        found.append(f"line {node.lineno}: {ast.unparse(node).splitlines()[0]}")
    return found


@pytest.mark.parametrize("path", _inits(), ids=lambda p: str(p.relative_to(ROOT)))
def test_an_init_holds_a_docstring_and_its_exports_only(path: Path) -> None:
    assert _breaches(path) == []


def test_every_init_is_found() -> None:
    assert len(_inits()) >= 15  # the walk itself works (a wrong ROOT would find none)
