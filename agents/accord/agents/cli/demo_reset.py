"""`accord demo --reset`: put the demo data back, touching nothing else.

The demo data lives in the data directory's SQLite databases (orders and customers seeded by
commerce, the payments ledger, the agents' tasks and workflows). Removing them is the reset:
each service seeds its demo data again when it next starts in development mode. The data
directory's development secret and service keys stay, so tokens and key files keep working;
`.venv` is never in it.

Refused while a service of the mesh answers (a running service holds its database open), and
with PostgreSQL (``ACCORD_DATABASE_URL``): those schemas are the operator's, not demo data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import httpx

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.service import service_names
from accord.protocol.settings import SettingsError, current, data_dir_path, service_url

# A SQLite database and the files beside it while it is open.
SQLITE_SUFFIXES: Final = (".db", ".db-wal", ".db-shm", ".db-journal")


def running_services() -> list[str]:
    """The installed services that answer at their URLs now."""
    running = []
    for name in service_names():
        try:
            url = service_url(name)
        except SettingsError:
            continue
        try:
            if httpx.get(f"{url}/healthz", timeout=0.5).status_code < 500:
                running.append(name)
        except httpx.HTTPError:
            continue
    return running


def reset_demo_data(data_dir: Path | None = None) -> list[Path]:
    """Remove the data directory's SQLite files; the paths removed. INVALID_INPUT when the mesh
    runs or the store is PostgreSQL."""
    where = data_dir or data_dir_path()
    if current().database_url:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            "--reset clears the embedded SQLite data only; ACCORD_DATABASE_URL names a "
            "PostgreSQL store (its schemas are yours: see docs/storage.md)",
        )
    running = running_services()
    if running:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"the mesh is running ({', '.join(running)} answer): stop `accord up` first",
            {"running": running},
        )
    removed = []
    for path in sorted(where.glob("*")) if where.is_dir() else []:
        if path.is_file() and path.name.endswith(SQLITE_SUFFIXES):
            path.unlink()
            removed.append(path)
    return removed
