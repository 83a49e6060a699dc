"""Runtime settings shared by every service: where data lives, which database, which ports.

Read from the environment (``ACCORD_*``) so that containers and `accord up` configure services
the same way. Defaults are the documented ones; users script against them, keep them stable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORTS: Final[dict[str, int]] = {
    "orchestrator": 8700,
    "policy": 8701,
    "risk": 8702,
    "commerce": 8710,
    "payments": 8711,
}


def data_dir() -> Path:
    """The data directory (SQLite files, development secrets). Created on first use."""
    path = Path(os.environ.get("ACCORD_DATA_DIR", Path.cwd() / ".accord")).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def database_url(service: str) -> str:
    """The service's database: ``ACCORD_DATABASE_URL`` (PostgreSQL) or a SQLite file.

    One PostgreSQL URL serves every service (each keeps its own tables); SQLite files are one
    per service so that `accord up` needs no server.
    """
    url = os.environ.get("ACCORD_DATABASE_URL", "").strip()
    if url:
        return url
    return f"sqlite:///{data_dir() / f'{service}.db'}"


def service_url(name: str) -> str:
    """Base URL of a mesh service: ``ACCORD_<NAME>_URL`` or the default port on 127.0.0.1."""
    env = os.environ.get(f"ACCORD_{name.upper()}_URL")
    if env:
        return env.rstrip("/")
    return f"http://{DEFAULT_HOST}:{DEFAULT_PORTS[name]}"


@dataclass(frozen=True)
class ServeOptions:
    host: str = DEFAULT_HOST
    port: int = 0
    database_url: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
