"""Hot-path statements: a Core statement compiled once per dialect, run on the DBAPI cursor.

SQLAlchemy's per-execution work (parameter processing, cache lookups, result wrapping) costs
tens of microseconds; a commit on SQLite in WAL mode costs about as much. Where a benchmark
shows it (the workflow runtime: ``bench/workflow_runtime.py`` went from 0.6x to 0.23x of the
raw append with every append statement executed through Core), a store runs the same statement,
written once in Core for both dialects, on the driver beneath: the SQL and the order of its
parameters are taken from the compiled statement, so there is still no SQL text per dialect.

The caller passes values the driver takes as they are (str, int, float, bool, None; JSON as
text): no type's bind processing runs. Expanding parameters (``IN``-lists) are not supported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler


class Prepared:
    def __init__(self, statement: ClauseElement) -> None:
        self.statement = statement
        self._compiled: dict[Any, tuple[str, tuple[str, ...], dict[str, Any]]] = {}

    def _for(
        self, conn: Connection, lists: tuple[tuple[str, int], ...]
    ) -> tuple[str, tuple[str, ...], dict[str, Any]]:
        key = (conn.dialect.name, lists)
        found = self._compiled.get(key)
        if found is None:
            statement = self.statement
            options: dict[str, Any] = {}
            if lists:  # one variant per list length: IN (?, ?, ...) with NAME_1, NAME_2, ...
                statement = statement.params({name: [None] * n for name, n in lists})
                options = {"compile_kwargs": {"render_postcompile": True}}
            compiled = statement.compile(dialect=conn.dialect, **options)
            assert isinstance(compiled, SQLCompiler)
            defaults = {name: bind.value for name, bind in compiled.binds.items()}
            found = (str(compiled), tuple(compiled.positiontup or ()), defaults)
            self._compiled[key] = found
        return found

    def execute(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        """Execute with ``params`` (by bind name; a list for an ``IN`` of expanding
        parameters); returns the DBAPI cursor (``fetchone``, ``fetchall``, ``rowcount``)."""
        lists = tuple((k, len(v)) for k, v in params.items() if isinstance(v, list))
        if lists:
            flat = dict(params)
            for name, _ in lists:
                flat.update({f"{name}_{i}": v for i, v in enumerate(flat.pop(name), start=1)})
            params = flat
        sql, names, defaults = self._for(conn, lists)
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        values = tuple(params[n] if n in params else defaults[n] for n in names)
        with _as_sqlalchemy(conn, sql, values):
            cursor.execute(sql, values)
        return cursor

    def executemany(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        sql, names, defaults = self._for(conn, ())
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        values = [tuple(r[n] if n in r else defaults[n] for n in names) for r in rows]
        with _as_sqlalchemy(conn, sql, values):
            cursor.executemany(sql, values)


@contextmanager
def _as_sqlalchemy(conn: Connection, sql: str, params: Any) -> Iterator[None]:
    """The driver's error as SQLAlchemy would have raised it had it run the statement: a
    ``DBAPIError`` (what the stores catch), and a connection the database dropped (a restart,
    a failover) invalidated, so the pool connects afresh instead of handing it out again."""
    dbapi = conn.dialect.loaded_dbapi
    try:
        yield
    except dbapi.Error as error:
        lost = conn.dialect.is_disconnect(error, conn.connection.dbapi_connection, None)
        if lost:
            conn.invalidate(error)
        raise DBAPIError.instance(
            sql, params, error, dbapi.Error, connection_invalidated=lost, dialect=conn.dialect
        ) from error
