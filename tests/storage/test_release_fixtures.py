"""Every release's fixture loads on both databases and holds what the release left: every
table, rows for every route, the tasks its manifest names in the states it says."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from accord.contracts.evolution.baseline import baselines
from tests.storage import release_fixtures

ROOT = Path(__file__).resolve().parents[2]

# (table, SQL) -> rows: the fixture's tables, wherever they are (a SQLite file, or the one
# PostgreSQL database).
Query = Callable[[str, str], Awaitable[list[tuple[Any, ...]]]]

# What each release made, file by file (version tables aside). A new release's fixture needs no
# entry here: the invariants below check it too.
RELEASE_TABLES: dict[str, dict[str, set[str]]] = {
    "v0_1": {
        "orchestrator": {"a2a_tasks_orchestrator"},
        "orchestrator-workflows": {
            "workflow_runs",
            "workflow_events",
            "workflow_timers",
            "workflow_owners",
        },
        "policy": {"a2a_tasks_policy"},
        "risk": {"a2a_tasks_risk"},
        "commerce": {
            "commerce_customers",
            "commerce_orders",
            "commerce_order_items",
            "commerce_refunds",
        },
        "payments": {"payments_orders", "payments_refunds"},
    },
    "v0_2": {
        # The orchestrator's tasks are views of its workflow log: its file keeps push only.
        "orchestrator": {"a2a_push_orchestrator", "a2a_push_orchestrator_outbox"},
        "orchestrator-workflows": {
            "workflow_runs",
            "workflow_events",
            "workflow_timers",
            "workflow_owners",
        },
        "policy": {
            "a2a_tasks_policy",
            "a2a_tasks_policy_workers",
            "a2a_push_policy",
            "a2a_push_policy_outbox",
        },
        "risk": {
            "a2a_tasks_risk",
            "a2a_tasks_risk_workers",
            "a2a_push_risk",
            "a2a_push_risk_outbox",
        },
        "commerce": {"commerce_customers", "commerce_orders", "commerce_order_items"},
        "payments": {"payments_orders", "payments_refunds"},
    },
}
# Written by every release's main routes.
ROUTE_TABLES = {
    "workflow_runs",
    "workflow_events",
    "a2a_tasks_policy",
    "a2a_tasks_risk",
    "commerce_orders",
    "payments_refunds",
}
REFUNDED_ROLES = ("refunded", "answered", "partial")


@pytest.fixture(params=release_fixtures.RELEASES)
def release(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def sqlite_tables(data_dir: Path, release: str) -> dict[str, set[str]]:
    """file -> its tables, version tables included."""
    found: dict[str, set[str]] = {}
    for name in release_fixtures.sqlite_files(release):
        with sqlite3.connect(data_dir / f"{name}.db") as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            found[name] = {r[0] for r in rows}
    return found


async def check_contents(release: str, dialect: str, tables: set[str], query: Query) -> None:
    """What every release's fixture holds, on either database."""
    assert tables >= ROUTE_TABLES
    for table in ROUTE_TABLES:
        assert (await query(table, f"SELECT count(*) FROM {table}"))[0][0] > 0, table
    versions = {t for t in tables if t.startswith("alembic_version_")}
    if release in release_fixtures.UNVERSIONED:
        assert not versions
    else:
        assert versions
        for table in versions:  # one revision each
            assert len(await query(table, f"SELECT version_num FROM {table}")) == 1, table

    tasks = release_fixtures.tasks(release, dialect)
    for name, status in tasks["statuses"].items():
        task_id = tasks[name]["task_id"]
        found = await query(
            "workflow_runs", f"SELECT status FROM workflow_runs WHERE id = '{task_id}'"
        )
        assert found == [(status,)], name
    for name in REFUNDED_ROLES:
        if name in tasks:
            order = tasks[name]["order_id"]
            refunds = await query(
                "payments_refunds",
                "SELECT count(*) FROM payments_refunds "
                f"WHERE order_id = '{order}' AND idempotency_key LIKE 'refund:%'",
            )
            assert refunds[0][0] >= 1, name
    if "push" in tasks:
        table = "a2a_push_orchestrator"
        for name in ("approval", "answered"):
            config = tasks["push"][name]
            found = await query(
                table,
                f"SELECT owner FROM {table} "
                f"WHERE task_id = '{config['task_id']}' AND id = '{config['id']}'",
            )
            assert found == [(f"accord/{config['user']}",)], name
        # Notifications the dead hook never took, as a stopped agent leaves them.
        outbox = await query(f"{table}_outbox", f"SELECT count(*) FROM {table}_outbox")
        assert outbox[0][0] > 0


async def test_sqlite_fixture_has_every_database_with_rows(release: str, tmp_path: Path) -> None:
    release_fixtures.load_sqlite(release, tmp_path)
    found = sqlite_tables(tmp_path, release)
    if release in RELEASE_TABLES:
        plain = {
            f: {t for t in ts if not t.startswith("alembic_version_")} for f, ts in found.items()
        }
        assert plain == RELEASE_TABLES[release]
    where = {table: name for name, tables in found.items() for table in tables}

    async def query(table: str, sql: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(tmp_path / f"{where[table]}.db") as conn:
            return [tuple(r) for r in conn.execute(sql)]

    await check_contents(release, "sqlite", set(where), query)


@pytest.mark.postgres
async def test_postgres_fixture_has_every_table_with_rows(
    release: str, postgres_url: str, tmp_path: Path
) -> None:
    await release_fixtures.load_postgres(release, postgres_url)
    conn = await asyncpg.connect(postgres_url)
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        found = {r["tablename"] for r in rows}
        # The same tables as the release's SQLite files: one release, two databases.
        release_fixtures.load_sqlite(release, tmp_path)
        assert found == set().union(*sqlite_tables(tmp_path, release).values())

        async def query(_table: str, sql: str) -> list[tuple[Any, ...]]:
            return [tuple(r) for r in await conn.fetch(sql)]

        await check_contents(release, "postgresql", found, query)
    finally:
        await conn.close()


def test_every_recorded_release_has_a_database_fixture() -> None:
    """Upgrades are tested from every release: a release recorded in contracts/releases/ (what
    `make release` writes) has its fixture here, and no fixture names an unrecorded release."""
    recorded = {
        f"v{record.key[0]}_{record.key[1]}"
        for record in (b.record for b in baselines(ROOT / "contracts" / "releases"))
    }
    assert recorded == set(release_fixtures.RELEASES)
