"""Recreate "a database of release X with data in it" from the committed fixture of any release.

Each folder of ``fixtures/`` named ``vMAJOR_MINOR`` is the fixture of one release: SQL dumps of
every database a mesh of that release left after serving the refund assistant's main routes
(``sqlite/NAME.sql`` per SQLite file, ``postgresql/accord.sql``), and ``tasks.json``, which
task ended how. They are written by ``fixtures/generate.py`` running that release's code (how
each one was made: its docstring). ``RELEASES`` is every folder found, oldest first: a new
release's fixture is a new folder, and the storage tests upgrade it with all the others.
(The releases' code, installed to run beside the working tree, is ``releases.py``.)
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any, Final

import asyncpg

FIXTURES: Final = Path(__file__).with_name("fixtures")
_NAME: Final = re.compile(r"^v(\d+)_(\d+)$")
# v0.1 created its tables without a version table (CREATE TABLE IF NOT EXISTS); every release
# since keeps one per schema (alembic_version_<schema>).
UNVERSIONED: Final = frozenset({"v0_1"})


def version(release: str) -> tuple[int, int]:
    """``v0_2`` -> ``(0, 2)``."""
    found = _NAME.match(release)
    if found is None:
        raise ValueError(f"not a release fixture name: {release!r}")
    return int(found[1]), int(found[2])


RELEASES: Final = tuple(
    sorted((p.name for p in FIXTURES.iterdir() if p.is_dir() and _NAME.match(p.name)), key=version)
)


def folder(release: str) -> Path:
    version(release)
    return FIXTURES / release


def tasks(release: str, dialect: str) -> dict[str, Any]:
    """What the fixture's tasks are (ids, users, orders), by role: ``refunded``, ``approval`` ...

    Every release has ``refunded``, ``explained``, ``approval`` (waiting for an approver),
    ``question`` (waiting for an answer), ``answered`` and ``statuses``; later ones more roles
    for what they added (v0.2: ``partial``, a named amount refunded; ``push``, configs)."""
    manifest: dict[str, Any] = json.loads((folder(release) / "tasks.json").read_text())
    return dict(manifest[dialect])


def sqlite_files(release: str) -> tuple[str, ...]:
    """The SQLite files the release's mesh left (``orchestrator``, ``payments`` ...)."""
    return tuple(sorted(p.stem for p in (folder(release) / "sqlite").glob("*.sql")))


def load_sqlite(release: str, data_dir: Path) -> None:
    """Write the release's SQLite file of every service into ``data_dir``, as `accord up`
    keeps them."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in sqlite_files(release):
        conn = sqlite3.connect(data_dir / f"{name}.db")
        try:
            conn.executescript((folder(release) / "sqlite" / f"{name}.sql").read_text())
            conn.execute("PRAGMA journal_mode=WAL")  # as the services leave their files
        finally:
            conn.close()


async def load_postgres(release: str, url: str) -> None:
    """Load the release's PostgreSQL database (every service's tables in one) into the empty
    ``url``."""
    conn = await asyncpg.connect(url)
    try:
        # pg_dump's script empties search_path for its session: a connection of its own.
        await conn.execute((folder(release) / "postgresql" / "accord.sql").read_text())
    finally:
        await conn.close()
