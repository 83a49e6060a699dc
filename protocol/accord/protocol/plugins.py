"""What an application plugs into the `accord` command, read from entry points without
``importlib.metadata``.

Two groups (docs/apps.md "Plugging into accord"):

- ``accord.commands``: APP = ``module:attribute``, a tuple of
  :class:`~accord.cli.lazy_group.LazyCommand` (each command's name, the module that registers
  it, its one-line summary) in a module that imports nothing else, so `accord --help` lists the
  commands without importing them.
- ``accord.apps``: NAME = ``module:attribute``, an :class:`InstalledApp`: the application
  `accord up` runs in a folder without an app file of its own.

Why not ``importlib.metadata.entry_points``: importing it costs 25-40 ms (email, zipfile, csv),
a quarter of `accord --help`'s whole start (#16); the reading it would do here is a scan of the
``*.dist-info/entry_points.txt`` files on ``sys.path``, a few milliseconds. Services
(``accord.services``) are still found by ``accord.protocol.service``, which is imported by the
commands that start them anyway.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

COMMANDS_GROUP: Final = "accord.commands"
APPS_GROUP: Final = "accord.apps"
DEV_USER: Final = "developer"  # a development token's subject when no application names one


@dataclass(frozen=True)
class InstalledApp:
    """An application built into the `accord` command: its app file (docs/apps.md) and what
    `accord up` prints once it is up (``{accord}`` stands for the command as the user typed
    it)."""

    path: Path
    hint: str = ""  # a first command to try
    console_hint: str = ""  # how to sign in to the web console, for an app with one
    tools: Path | None = None  # its tools file: `accord tools list`'s default
    # Whose development token `accord call` and `accord tools check` mint when given neither
    # a credential nor --user: a user of its demo data.
    dev_user: str = DEV_USER


def entry_points(group: str) -> dict[str, str]:
    """``name -> "module:attribute"`` of every installed entry point of ``group``; the first
    distribution on ``sys.path`` wins a name, as the import system would pick its module."""
    found: dict[str, str] = {}
    seen: set[str] = set()  # distributions, by normalised name: the first on the path counts
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue  # a zip, or a folder that is not there
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            dist = name.rsplit("-", 1)[0].lower().replace("-", "_").replace(".", "_")
            if dist in seen:
                continue
            seen.add(dist)
            path = os.path.join(folder or ".", name, "entry_points.txt")
            try:
                with open(path, encoding="utf-8") as file:
                    text = file.read()
            except OSError:
                continue  # a distribution without entry points
            for key, value in _section(text, group):
                found.setdefault(key, value)
    return found


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of ``[group]`` in an entry_points.txt (an INI file)."""
    out: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            key, value = line.split("=", 1)
            out.append((key.strip(), value.split("[", 1)[0].strip()))  # extras: not ours
    return out


def load(value: str) -> object:
    """The object an entry point's ``module:attribute`` names (the module imported)."""
    module, _, attribute = value.partition(":")
    target: object = importlib.import_module(module.strip())
    for part in attribute.strip().split(".") if attribute.strip() else ():
        target = getattr(target, part)
    return target


def dev_user() -> str:
    """The subject of a development token minted for no one in particular."""
    app = installed_app()
    return app.dev_user if app is not None else DEV_USER


def installed_app() -> InstalledApp | None:
    """The application built into `accord` (group ``accord.apps``), if one is installed; with
    several, the first by name (an app file, ``--app``, says which to run)."""
    apps = entry_points(APPS_GROUP)
    for name in sorted(apps):
        app = load(apps[name])
        if isinstance(app, InstalledApp):
            return app
    return None
