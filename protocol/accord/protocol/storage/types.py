"""Column types that render as the v0.1 schema did on each database.

v0.1 wrote its DDL by hand per dialect (REAL on SQLite, DOUBLE PRECISION on PostgreSQL, ...);
these types keep that DDL, so the baseline migration is exactly the release's schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, Dialect, Double, Integer, LargeBinary, Text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.types import TypeDecorator, TypeEngine

# Seconds since the epoch: REAL / DOUBLE PRECISION.
EPOCH_SECONDS: TypeEngine[float] = Double().with_variant(sqlite.REAL(), "sqlite")


class EncodedJson(TypeDecorator[Any]):
    """JSON written as the producer's own text, read back decoded: TEXT on SQLite, JSONB on
    PostgreSQL.

    Binding takes the JSON text as it is (SQLAlchemy's JSON types would encode it once more:
    an event already carries its encoding, and asyncpg's jsonb codec, as SQLAlchemy sets it up,
    takes text). Reading gives the decoded value on both: PostgreSQL's codec decodes, SQLite's
    text is decoded here.
    """

    impl = Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(postgresql.JSONB())
        return dialect.type_descriptor(Text())

    def bind_processor(self, dialect: Dialect) -> None:
        return None

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any] | None:
        if dialect.name == "postgresql":
            return None
        return _decode


def _decode(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


JSON_TEXT: TypeEngine[Any] = EncodedJson()
# A flag: INTEGER 0/1 on SQLite, BOOLEAN on PostgreSQL.
FLAG: TypeEngine[bool] = Boolean().with_variant(Integer(), "sqlite")
# Nanoseconds and other 64-bit integers: INTEGER on SQLite (64-bit there), BIGINT on PostgreSQL.
BIG_INT: TypeEngine[int] = BigInteger().with_variant(Integer(), "sqlite")
BYTES: TypeEngine[bytes] = LargeBinary()


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both backends (SQLite stores naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def iso(value: datetime) -> str:
    """RFC 3339 UTC with a Z, as the contracts' ``date-time`` fields carry it."""
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
