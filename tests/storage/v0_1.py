"""Recreate "a database of the last release with data in it" from the committed v0.1 fixture.

The fixture (``fixtures/v0_1``) was written by ``fixtures/generate_v0_1.py`` running the v0.1.0
code: SQL dumps of every database after a mesh served the refund assistant's main routes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Final

import asyncpg

FIXTURE: Final = Path(__file__).with_name("fixtures") / "v0_1"
SQLITE_DATABASES: Final = (
    "orchestrator",
    "orchestrator-workflows",
    "policy",
    "risk",
    "commerce",
    "payments",
)


def tasks(dialect: str) -> dict[str, Any]:
    """What the fixture's tasks are (ids, users, orders), by role: ``refunded``, ``approval`` ..."""
    manifest: dict[str, Any] = json.loads((FIXTURE / "tasks.json").read_text())
    return dict(manifest[dialect])


def load_sqlite(data_dir: Path) -> None:
    """Write the v0.1 SQLite file of every service into ``data_dir``, as `accord up` keeps them."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in SQLITE_DATABASES:
        conn = sqlite3.connect(data_dir / f"{name}.db")
        try:
            conn.executescript((FIXTURE / "sqlite" / f"{name}.sql").read_text())
            conn.execute("PRAGMA journal_mode=WAL")  # as v0.1 left its files
        finally:
            conn.close()


async def load_postgres(url: str) -> None:
    """Load the v0.1 PostgreSQL database (every service's tables in one) into the empty ``url``."""
    conn = await asyncpg.connect(url)
    try:
        # pg_dump's script empties search_path for its session: a connection of its own.
        await conn.execute((FIXTURE / "postgresql" / "accord.sql").read_text())
    finally:
        await conn.close()
