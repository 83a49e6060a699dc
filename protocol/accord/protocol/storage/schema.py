"""A schema: a set of tables in one database, with the migration history that makes them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import MetaData

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,46}$")  # alembic_version_<name> fits in 63 characters

# Every history starts with the schema v0.1.0 created (with CREATE TABLE IF NOT EXISTS and no
# version): a database of that release has these tables and no version table.
BASELINE = "0001"


@dataclass(frozen=True)
class Schema:
    """One migration history (its own version table, so schemas can share a database).

    ``metadata`` is the tables as the code uses them (the head of ``migrations``; a test checks
    that the two agree). ``v0_1_table`` is a table v0.1 created: found without a version table,
    it marks an unversioned v0.1 database, which is stamped at the baseline and upgraded.
    ``options`` are handed to the revisions (e.g. the per-service table name).
    """

    name: str
    metadata: MetaData
    migrations: Path  # folder of env.py, with the revisions in versions/
    v0_1_table: str
    options: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"invalid schema name {self.name!r}")

    @property
    def version_table(self) -> str:
        return f"alembic_version_{self.name}"


@dataclass(frozen=True)
class StoreRef:
    """Where a service keeps one schema: what `accord db upgrade` and `current` look at."""

    schema: Schema
    url: str
