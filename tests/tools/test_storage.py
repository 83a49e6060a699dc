"""Storage of the tool servers, in process: schema and seed on each start, both backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.protocol.storage.urls import parse_url
from accord.tools.commerce_store import CommerceStore
from accord.tools.ledger import Ledger
from tests.tools.conftest import Backend


async def test_seeding_is_idempotent_across_restarts(backend: Backend, tmp_path: Path) -> None:
    # A start is what a process restart runs: create missing tables, then seed.
    target = Backend(backend.name, tmp_path, backend.database_url)
    commerce_url = target.database_url or f"sqlite:///{tmp_path / 'commerce.db'}"
    payments_url = target.database_url or f"sqlite:///{tmp_path / 'payments.db'}"
    counts = []
    for _ in range(2):
        for store in (CommerceStore(commerce_url), Ledger(payments_url)):
            await store.start()
            assert await store.ready()
            await store.stop()
        counts.append(
            (
                await target.scalar("commerce", "SELECT count(*) FROM commerce_orders"),
                await target.scalar("commerce", "SELECT count(*) FROM commerce_order_items"),
                await target.scalar("payments", "SELECT count(*) FROM payments_orders"),
                await target.scalar(
                    "payments",
                    "SELECT count(*) FROM payments_refunds WHERE receipt_id LIKE 'R-SEED-%'",
                ),
            )
        )
    # 12 orders (the demo's eleven and the contract test kit's O-9001); commerce keeps no
    # refunds (the seeded five are the ledger's).
    assert counts[0] == counts[1] == (12, 12, 12, 5)


async def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    ledger = Ledger(f"sqlite:///{tmp_path / 'p.db'}")
    await ledger.start()
    try:
        mode = await ledger.db.read(
            lambda conn: conn.exec_driver_sql("PRAGMA journal_mode").scalar_one()
        )
        sync = await ledger.db.read(
            lambda conn: conn.exec_driver_sql("PRAGMA synchronous").scalar_one()
        )
    finally:
        await ledger.stop()
    assert (mode, sync) == ("wal", 1)  # 1 = NORMAL


def test_database_urls_map_to_their_drivers() -> None:
    assert parse_url("sqlite:////tmp/x.db").driver() == "sqlite+pysqlite:////tmp/x.db"
    assert parse_url("postgresql://a@h:5/db").driver() == "postgresql+asyncpg://a@h:5/db"
    assert parse_url("postgres://a@h/db").driver().startswith("postgresql+asyncpg://")


@pytest.mark.parametrize(
    ("env", "seeded"),
    [
        ({"ACCORD_MODE": "production"}, False),
        ({"ACCORD_MODE": "production", "ACCORD_DEMO_DATA": "1"}, True),
        ({"ACCORD_MODE": "development", "ACCORD_DEMO_DATA": "0"}, False),
        ({"ACCORD_MODE": "development"}, True),
    ],
    ids=["production", "production-asked", "development-declined", "development"],
)
async def test_demo_data_is_seeded_in_development_only_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], seeded: bool
) -> None:
    """A production store holds the operator's own data: no demo customer, order or refund
    is written into it unless ``ACCORD_DEMO_DATA`` asks (compose.yaml, a demo)."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    target = Backend("sqlite", tmp_path, None)
    for store in (
        CommerceStore(f"sqlite:///{tmp_path / 'commerce.db'}"),
        Ledger(f"sqlite:///{tmp_path / 'payments.db'}"),
    ):
        await store.start()
        await store.stop()
    orders = await target.scalar("commerce", "SELECT count(*) FROM commerce_orders")
    refunds = await target.scalar("payments", "SELECT count(*) FROM payments_refunds")
    assert (orders > 0, refunds > 0) == (seeded, seeded)
