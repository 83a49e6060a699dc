"""One configuration channel: product code reads an ``ACCORD_*`` variable only through
:class:`~accord.protocol.settings.AccordSettings` (``current()``), never from ``os.environ`` or
``os.getenv`` itself. A read of its own is a second truth: it skips the validation, the
documented default and docs/configuration.md (issue 31).

The scan is of the syntax: ``os.environ[...]``, ``os.environ.get/pop/setdefault(...)``,
``os.getenv(...)``, ``... in os.environ``, also through ``from os import environ`` or a name
bound to ``os.environ`` (``env = os.environ if env is None else env``), whose key is a literal
``ACCORD_*`` string, a module constant of any product file holding one (``TOKEN_ENV``,
``FAULTS_ENV``), an f-string starting with ``ACCORD_`` or ``env_name(...)``. Writes
(``os.environ[K] = v``) are not reads: the settings read them. A read that must stay goes in
``ALLOWED`` with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[2]
# Every product package; the kit's, the runtime's and the CLI's sources are under protocol/kit,
# protocol/runtime and protocol/cli, not protocol/accord.
PACKAGES: Final = (
    "contracts",
    "protocol",
    "protocol/kit",
    "protocol/runtime",
    "protocol/cli",
    "tools",
    "agents",
)
THE_READER: Final = "protocol/accord/protocol/settings.py"  # current(): the one reader
PREFIX: Final = "ACCORD_"
READING_METHODS: Final = frozenset({"get", "pop", "setdefault"})
# (file, variable) -> why it is read from the environment directly.
ALLOWED: Final[dict[tuple[str, str], str]] = {
    ("protocol/kit/accord/kit/origins.py", "ACCORD_TRUSTED_ORIGINS"): (
        "accord-kit may not import accord.protocol (tests/workspace/test_layers.py): a team "
        "that installs only the kit has no settings module"
    ),
    ("protocol/kit/accord/kit/cli.py", "ACCORD_TOKEN"): "the kit, as above",
}


def _product_files() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package / "accord").rglob("*.py")):
            if str(path.relative_to(ROOT)) != THE_READER:
                yield path


def _is_os_attr(node: ast.expr, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def _mentions_environ(node: ast.expr) -> bool:
    return any(_is_os_attr(n, "environ") for n in ast.walk(node) if isinstance(n, ast.expr))


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "ACCORD_..."`` (annotated or not)."""
    found: dict[str, str] = {}
    for node in tree.body:
        target, value = (
            (node.targets[0], node.value)
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            else (node.target, node.value)
            if isinstance(node, ast.AnnAssign)
            else (None, None)
        )
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            found[target.id] = value.value
    return found


def _accord_name(key: ast.expr, constants: dict[str, str]) -> str | None:
    """The ``ACCORD_*`` variable ``key`` names, if it names one."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        text = key.value
    elif isinstance(key, ast.Name) and key.id in constants:
        text = constants[key.id]
    elif isinstance(key, ast.JoinedStr) and key.values:
        first = key.values[0]
        starts = first.value if isinstance(first, ast.Constant) else None
        text = f"{starts}*" if isinstance(starts, str) else ""
    elif isinstance(key, ast.Call) and isinstance(key.func, ast.Name | ast.Attribute):
        called = key.func.id if isinstance(key.func, ast.Name) else key.func.attr
        text = f"{PREFIX}*" if called == "env_name" else ""
    else:
        return None
    return text if text.startswith(PREFIX) else None


def env_reads(source: str, known: dict[str, str] | None = None) -> list[tuple[int, str]]:
    """``(line, variable)`` of every ``ACCORD_*`` read from the environment in ``source``;
    ``known``: constants of other modules it may import (name -> value)."""
    tree = ast.parse(source)
    constants = {**(known or {}), **_constants(tree)}
    # Names bound to os.environ anywhere in the module (one namespace is enough here: a
    # product file that reuses such a name for something else would only be over-reported).
    aliases = {
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
        if _mentions_environ(node.value)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }
    # ``from os import environ, getenv`` (under any name).
    imported = {
        (a.name, a.asname or a.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "os"
        for a in node.names
    }
    aliases |= {local for name, local in imported if name == "environ"}
    getenvs = {local for name, local in imported if name == "getenv"}

    def environ(node: ast.expr) -> bool:
        return _is_os_attr(node, "environ") or (isinstance(node, ast.Name) and node.id in aliases)

    def getenv(node: ast.expr) -> bool:
        return _is_os_attr(node, "getenv") or (isinstance(node, ast.Name) and node.id in getenvs)

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        keys: list[ast.expr] = []  # the keys ``node`` reads, if it reads the environment
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if environ(node.value):
                keys = [node.slice]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            if getenv(func) or (
                isinstance(func, ast.Attribute)
                and func.attr in READING_METHODS
                and environ(func.value)
            ):
                keys = [node.args[0]]
        elif isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, ast.In | ast.NotIn) and environ(right):
                    keys = [node.left]
        for key in keys:
            name = _accord_name(key, constants)
            if name is not None:
                found.append((key.lineno, name))
    return found


def test_product_code_reads_accord_variables_only_through_the_settings() -> None:
    sources = {path: path.read_text(encoding="utf-8") for path in _product_files()}
    known = {
        name: value
        for source in sources.values()
        for name, value in _constants(ast.parse(source)).items()
        if value.startswith(PREFIX)
    }
    reads = {
        (str(path.relative_to(ROOT)), name, line)
        for path, source in sources.items()
        for line, name in env_reads(source, known)
    }
    unexplained = sorted(r for r in reads if (r[0], r[1]) not in ALLOWED)
    assert unexplained == [], (
        "read these through accord.protocol.settings.current() (add a field to AccordSettings, "
        "with a description and a group, and run `make docs`), or allow them with the reason"
    )
    stale = set(ALLOWED) - {(file, name) for file, name, _ in reads}
    assert stale == set(), "these allowed reads are gone: remove them from ALLOWED"


def test_the_scan_sees_every_form_of_a_read() -> None:
    source = """
import os
TOKEN_ENV = "ACCORD_TOKEN"
a = os.environ["ACCORD_A"]
b = os.environ.get("ACCORD_B", "")
c = os.getenv("ACCORD_C")
d = "ACCORD_D" in os.environ
e = os.environ.get(TOKEN_ENV)
f = os.environ[f"ACCORD_{x}_URL"]
g = os.environ.pop(env_name("g"))
def reader(env=None):
    env = os.environ if env is None else env
    return env.get("ACCORD_H")
os.environ["ACCORD_WRITTEN"] = "1"
i = os.environ.get("COLUMNS")
n = os.getenv(FAULTS_ENV)
j = os.environ.get(some_name)
from os import environ as E, getenv
k = E["ACCORD_K"]
m = getenv("ACCORD_M")
"""
    assert sorted(name for _, name in env_reads(source, {"FAULTS_ENV": "ACCORD_FAULTS"})) == [
        "ACCORD_*",
        "ACCORD_*",
        "ACCORD_A",
        "ACCORD_B",
        "ACCORD_C",
        "ACCORD_D",
        "ACCORD_FAULTS",
        "ACCORD_H",
        "ACCORD_K",
        "ACCORD_M",
        "ACCORD_TOKEN",
    ]
