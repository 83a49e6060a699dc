"""Database URLs: the two we accept (``sqlite:///PATH``, ``postgresql://...``) and their drivers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from accord.contracts.errors import AccordError, ErrorCode


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """A parsed database URL: which dialect, and how our drivers reach it."""

    dialect: str  # "sqlite" or "postgresql"
    url: str  # as given
    sqlite_path: str | None  # the file (or ":memory:") for SQLite

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def driver(self) -> str:
        """The SQLAlchemy URL of our driver: the stdlib sqlite3, or asyncpg."""
        if self.sqlite_path is not None:
            return f"sqlite+pysqlite:///{self.sqlite_path}"
        return make_url(self.url).set(drivername="postgresql+asyncpg").render_as_string(False)

    def shown(self) -> str:
        """The URL without its password, for people and logs."""
        return make_url(self.url).render_as_string(hide_password=True)


def parse_url(url: str) -> DatabaseUrl:
    """``sqlite:///relative.db``, ``sqlite:////abs.db`` (any ``sqlite+driver``), ``postgresql://``
    (or ``postgres://``, any ``postgresql+driver``). Anything else is INVALID_INPUT."""
    try:
        parsed = make_url(url.replace("postgres://", "postgresql://", 1))
    except ArgumentError:
        parsed = None
    backend = parsed.get_backend_name() if parsed is not None else ""
    if parsed is not None and backend == "sqlite":
        path = parsed.database or ":memory:"
        if path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        return DatabaseUrl("sqlite", url, path)
    if parsed is not None and backend == "postgresql":
        return DatabaseUrl("postgresql", parsed.render_as_string(hide_password=False), None)
    raise AccordError(
        ErrorCode.INVALID_INPUT,
        "a database URL must start with sqlite:/// or postgresql://",
        {"rule": "database-url"},
    )
