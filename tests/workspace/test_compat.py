"""Compatibility code has one table (accord.contracts.compat) and goes when its release comes.

- every item names a removal release after the version main works toward: once the working
  version reaches it (``0.4.0.dev0`` reaches 0.4.0), this fails until the item and its code
  are deleted;
- every item is referenced by code (``compat.NAME``: a ``@compat.kept_for`` or a comment at the
  branch), and every reference names an item: no stale entry, no dangling mark;
- a comment or docstring that says "deprecated", "legacy", "upgrade window", ... has a mark
  near it, so compatibility code cannot hide from the table;
- docs/contract-evolution.md ("Compatibility code") shows the table as it is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Final

from accord.contracts import compat

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "contracts/accord",
    "protocol/accord",
    "protocol/kit/accord",
    "protocol/runtime/accord",
    "protocol/cli/accord",
    "tools/accord",
    "agents/accord",
)
REFERENCE = re.compile(r"\bcompat\.([A-Z][A-Z0-9_]*)\b")
# Words that say "this is here for an older release"; lowercase only (DEPRECATED_CARD_PARAMS is
# a name, marked where it is defined).
SAYS_COMPAT = re.compile(
    r"\bdeprecated\b|\blegacy\b|upgrade window|older spelling|for clients of 0\.|"
    r"kept for (workflows|callers|deployments|older)"
)
NEAR: Final = 8  # lines either side of a compatibility word where its mark may be
NOT_COMPAT: Final[dict[str, str]] = {
    # path:line text fragment -> why it is no compatibility code
    '"deprecated", "default"': "JSON Schema's `deprecated` keyword, prose to the diff",
}
PAGE = ROOT / "docs" / "contract-evolution.md"


def _release(text: str) -> tuple[int, int, int]:
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", text)
    assert found, f"{text!r} is no X.Y.Z version"
    major, minor, patch = found.groups()
    return int(major), int(minor), int(patch)


def _code_files() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            # Migrations are the storage layer's own upgrade path: they stay, unlisted.
            if "migrations" not in path.parts and path.name != "compat.py":
                yield path


def _references() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in _code_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name in REFERENCE.findall(line):
                found.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{number}")
    return found


def test_every_item_goes_before_its_release() -> None:
    working = _release(version("accord-contracts"))
    due = [
        f"{name} (goes away in {item.removed_in})"
        for name, item in compat.items().items()
        if _release(item.removed_in) <= working
    ]
    assert not due, (
        f"version {version('accord-contracts')} is their removal release: delete these items "
        f"and every `compat.NAME` of them: {due}"
    )


def test_items_are_named_by_their_constant() -> None:
    for name, item in compat.items().items():
        assert item.id == name.lower().replace("_", "-"), name
        _release(item.removed_in)
        assert item.accepts, name
        assert item.why, name


def test_every_item_is_referenced_and_every_reference_is_an_item() -> None:
    references = _references()
    stale = sorted(set(compat.items()) - set(references))
    assert not stale, f"items no code references (delete them, or mark their code): {stale}"
    dangling = {name: where for name, where in references.items() if name not in compat.items()}
    assert not dangling, f"marks naming no item of accord.contracts.compat: {dangling}"


def _kept_lines(source: str) -> set[int]:
    """The lines (1-based) of every function marked ``@compat.kept_for(...)``: all of it is."""
    kept: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            REFERENCE.search(ast.unparse(d)) for d in node.decorator_list
        ):
            kept.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return kept


def test_compatibility_words_carry_a_mark() -> None:
    unmarked: list[str] = []
    for path in _code_files():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        kept = _kept_lines(source) if SAYS_COMPAT.search(source) else set()
        for index, line in enumerate(lines):
            if not SAYS_COMPAT.search(line) or any(f in line for f in NOT_COMPAT):
                continue
            if index + 1 in kept:
                continue
            window = lines[max(0, index - NEAR) : index + NEAR + 1]
            if not any(REFERENCE.search(near) for near in window):
                unmarked.append(f"{path.relative_to(ROOT)}:{index + 1}: {line.strip()}")
    assert not unmarked, (
        "compatibility code without its item (add one to accord.contracts.compat and name it "
        f"here as compat.NAME): {unmarked}"
    )


def test_the_page_shows_the_table() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert page == compat.refresh_page(page), (
        "docs/contract-evolution.md's compatibility table is stale: run `make docs`"
    )
