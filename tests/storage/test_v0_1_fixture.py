"""The v0.1 fixture loads on both databases and holds what the release left: every table, rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg
import pytest

from tests.storage import v0_1

V0_1_TABLES = {
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
}


def test_sqlite_fixture_has_every_database_with_rows(tmp_path: Path) -> None:
    v0_1.load_sqlite(tmp_path)
    for name, tables in V0_1_TABLES.items():
        with sqlite3.connect(tmp_path / f"{name}.db") as conn:
            found = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            assert found == tables, name
            for table in tables - {"workflow_timers", "workflow_owners"}:
                assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0, table
    tasks = v0_1.tasks("sqlite")
    with sqlite3.connect(tmp_path / "orchestrator-workflows.db") as conn:
        status = conn.execute(
            "SELECT status FROM workflow_runs WHERE id = ?", (tasks["approval"]["task_id"],)
        ).fetchone()
    assert status == ("waiting",)


@pytest.mark.postgres
async def test_postgres_fixture_has_every_table_with_rows(postgres_url: str) -> None:
    await v0_1.load_postgres(postgres_url)
    conn = await asyncpg.connect(postgres_url)
    try:
        rows = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        found = {r["tablename"] for r in rows}
        assert found == set().union(*V0_1_TABLES.values())
        refund = await conn.fetchval(
            "SELECT count(*) FROM payments_refunds WHERE idempotency_key = 'refund:O-1001'"
        )
        assert refund == 1
    finally:
        await conn.close()
