"""Schema migrations on SQLite and PostgreSQL: every release's databases with data (v0.1's
stamped first) are upgraded with every row intact; a fresh database and an upgraded one of any
release end with the same schema, the one the code's table definitions describe; replicas
upgrading at once migrate once; a database newer than the code is refused."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth.names import DEFAULT_APP
from accord.protocol.storage.migrate import current, head, upgrade
from accord.protocol.storage.schema import Schema
from accord.protocol.storage.sqlite import sqlite_engine
from accord.protocol.storage.urls import parse_url
from tests.storage import release_fixtures, schemas

T = TypeVar("T")


async def on(url: str, fn: Callable[[Connection], T]) -> T:
    """Run ``fn`` on a connection of its own to ``url`` (read only, rolled back)."""
    database = parse_url(url)
    if database.sqlite_path is not None:
        engine = sqlite_engine(database.sqlite_path)
        try:
            with engine.connect() as conn:
                return fn(conn)
        finally:
            engine.dispose()
    aengine = create_async_engine(database.driver(), poolclass=NullPool)
    try:
        async with aengine.connect() as aconn:
            return await aconn.run_sync(fn)
    finally:
        await aengine.dispose()


def databases(dialect: str, where: Path | str) -> list[tuple[str, tuple[Schema, ...]]]:
    """(url, schemas in it) of every database of ``dialect`` (as the code lays them out)."""
    if dialect == "sqlite":
        assert isinstance(where, Path)
        return [(f"sqlite:///{where / f'{n}.db'}", s) for n, s in schemas.SQLITE_FILES.items()]
    assert isinstance(where, str)
    return [(where, schemas.ALL)]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=release_fixtures.RELEASES)
def release(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def release_databases(
    release: str, dialect: str, request: pytest.FixtureRequest, tmp_path: Path
) -> list[tuple[str, tuple[Schema, ...]]]:
    """The databases of ``release`` (its fixture loaded), and the schemas the code keeps in
    each."""
    if dialect == "sqlite":
        release_fixtures.load_sqlite(release, tmp_path / release)
        return databases(dialect, tmp_path / release)
    url: str = request.getfixturevalue("postgres_url")
    await release_fixtures.load_postgres(release, url)
    return [(url, schemas.ALL)]


@pytest.fixture
def fresh_databases(
    dialect: str, request: pytest.FixtureRequest, tmp_path: Path
) -> list[tuple[str, tuple[Schema, ...]]]:
    if dialect == "sqlite":
        return databases(dialect, tmp_path / "fresh")
    url: str = request.getfixturevalue("postgres_url")
    return [(url, schemas.ALL)]


# commerce migration 0002: commerce keeps no refunds; its table held only the seed's five,
# which the payments ledger holds too (issue 13, one record of money).
DROPPED_SINCE_0_1 = frozenset({"commerce_refunds"})


async def test_release_databases_are_upgraded_with_their_data(
    release: str, release_databases: list[tuple[str, tuple[Schema, ...]]]
) -> None:
    for url, group in release_databases:
        before_cols = await on(url, schemas.columns)
        # Tables a migration drops on purpose leave the comparison (their rows were copies).
        before_cols = {t: c for t, c in before_cols.items() if t not in DROPPED_SINCE_0_1}
        before_rows = await on(url, lambda c, cols=before_cols: schemas.rows(c, cols))
        assert any(before_rows.values())
        for schema in group:
            found = await current(url, schema)
            if release in release_fixtures.UNVERSIONED:
                assert found.current is None
                # v0.1 had no push tables, nor anything since v0.2.
                assert (
                    found.unversioned
                    or schema.name.startswith("a2a_push_")
                    or schema.name in schemas.SINCE_0_2
                )
            else:
                # A revision of its history (upgrade refuses any other), or a schema the
                # release did not keep (the orchestrator's task table, after v0.1) or did not
                # have yet.
                assert not found.unversioned
                assert (
                    found.current is not None
                    or schema in schemas.RETIRED
                    or schema.name in schemas.SINCE_0_2
                ), schema.name
            was, now = await upgrade(url, schema)
            assert was == found
            assert now.current == head(schema)
            assert (await current(url, schema)).up_to_date
        # Every row the release left is still there, column for column.
        assert await on(url, lambda c, cols=before_cols: schemas.rows(c, cols)) == before_rows


async def test_a_fresh_database_and_an_upgraded_one_of_any_release_have_the_same_schema(
    release_databases: list[tuple[str, tuple[Schema, ...]]],
    fresh_databases: list[tuple[str, tuple[Schema, ...]]],
) -> None:
    for (old_url, group), (new_url, _) in zip(release_databases, fresh_databases, strict=True):
        for schema in group:
            await upgrade(old_url, schema)
            await upgrade(new_url, schema)
        assert await on(new_url, schemas.describe) == await on(old_url, schemas.describe)


async def test_the_migrations_make_what_the_table_definitions_describe(
    fresh_databases: list[tuple[str, tuple[Schema, ...]]],
) -> None:
    for url, group in fresh_databases:
        for schema in group:
            await upgrade(url, schema)

            def diff(conn: Connection, schema: Schema = schema) -> list[Any]:
                tables = set(schema.metadata.tables)
                context = MigrationContext.configure(
                    conn,
                    opts={
                        "compare_type": True,
                        "compare_server_default": True,
                        "include_name": lambda name, kind, _parent: (
                            kind != "table" or name in tables
                        ),
                    },
                )
                return list(compare_metadata(context, schema.metadata))

            assert await on(url, diff) == [], schema.name


async def test_replicas_starting_at_once_migrate_once(
    fresh_databases: list[tuple[str, tuple[Schema, ...]]], caplog: pytest.LogCaptureFixture
) -> None:
    url, group = fresh_databases[0]
    schema = group[0]
    caplog.set_level(logging.INFO, logger="alembic.runtime.migration")
    results = await asyncio.gather(*(upgrade(url, schema) for _ in range(4)))
    assert all(after.up_to_date for _, after in results)
    # Only the first to take the lock ran the migrations (each once); the others found the head.
    ran = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Running upgrade")]
    steps = [m.split(",")[0] for m in ran]
    assert len(steps) == len(set(steps)), ran
    assert steps[0].startswith("Running upgrade  -> "), ran  # from an empty database, once
    versions = await on(
        url, lambda c: c.execute(text(f"SELECT version_num FROM {schema.version_table}")).all()
    )
    assert [v[0] for v in versions] == [head(schema)]


async def test_a_database_newer_than_the_code_is_refused(
    fresh_databases: list[tuple[str, tuple[Schema, ...]]],
) -> None:
    url, group = fresh_databases[0]
    schema = group[0]
    await upgrade(url, schema)

    def bump(conn: Connection) -> None:
        conn.execute(text(f"UPDATE {schema.version_table} SET version_num = 'f00d'"))
        conn.commit()

    await on(url, bump)
    for attempt in (current, upgrade):
        with pytest.raises(AccordError) as raised:
            await attempt(url, schema)
        assert raised.value.code is ErrorCode.VERSION_UNSUPPORTED
        assert raised.value.details["revision"] == "f00d"


async def test_every_releases_workflows_are_listed_under_the_scope_and_context_they_started_with(
    release_databases: list[tuple[str, tuple[Schema, ...]]],
) -> None:
    # v0.1's are backfilled by workflow 0002; a later release's were written so.
    url = next(u for u, group in release_databases if schemas.WORKFLOW in group)
    await upgrade(url, schemas.WORKFLOW)
    found = await on(
        url,
        lambda c: c.execute(
            text(
                "SELECT r.id, r.updated_at, r.scope, r.context_id, "
                "(SELECT max(e.at) FROM workflow_events e WHERE e.workflow_id = r.id), "
                "(SELECT e.data FROM workflow_events e WHERE e.workflow_id = r.id AND e.seq = 1) "
                "FROM workflow_runs r"
            )
        ).all(),
    )
    assert len(found) >= 4
    for _wid, updated_at, scope, context_id, last_event, started in found:
        assert updated_at == last_event
        inp = (started if isinstance(started, dict) else json.loads(started))["input"]
        assert scope == inp["owner"]
        assert context_id == inp["session"]


# Orders and money are kept per tenant app since commerce 0003 and payments 0002 (#30).
TENANT_TABLES = (
    "commerce_customers",
    "commerce_orders",
    "commerce_order_items",
    "payments_orders",
    "payments_refunds",
)


async def test_every_releases_orders_and_money_become_the_demo_apps(
    release_databases: list[tuple[str, tuple[Schema, ...]]],
) -> None:
    seen: dict[str, tuple[int, int]] = {}
    for url, group in release_databases:
        for schema in group:
            await upgrade(url, schema)

        def count(conn: Connection) -> dict[str, tuple[int, int]]:
            present = set(inspect(conn).get_table_names())
            found: dict[str, tuple[int, int]] = {}
            for table in TENANT_TABLES:
                if table in present:
                    rows, demo = conn.execute(
                        text(f"SELECT count(*), count(*) FILTER (WHERE app = :app) FROM {table}"),
                        {"app": DEFAULT_APP},
                    ).one()
                    found[table] = (int(rows), int(demo))
            return found

        seen |= await on(url, count)
    assert set(seen) == set(TENANT_TABLES)
    for table, (rows, demo) in seen.items():
        assert rows > 0, table  # the release left rows in it ...
        assert demo == rows, table  # ... and every one is the demo app's now
