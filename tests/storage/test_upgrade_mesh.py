"""The services start on the databases of every release (its fixture, with data), upgrade
them, and go on working: the old tasks read back, a refund that waited for approval since that
release is approved and issued, the ledger still has the old refunds, and what later releases
added (a partial refund, push configs) reads back too (SQLite and PostgreSQL, five real
processes each)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg
import pytest

from accord.contracts.status import Status, WaitingReason
from accord.protocol.storage.migrate import current
from tests.mesh.push_support import rpc
from tests.mesh.support import SERVICES, approve, get_task, running_mesh
from tests.storage import release_fixtures, schemas
from tests.support import postgres

pytestmark = pytest.mark.timeout(300)

# However old the fixture is, its finished tasks are still there to read: the default
# retention (30 days after their last change) would delete them at start.
KEEP = {n: {"ACCORD_TASK_RETENTION_S": str(100 * 365 * 86_400)} for n in SERVICES}
REFUNDS = (
    "SELECT order_id, count(*) FROM payments_refunds "
    "WHERE idempotency_key LIKE 'refund:%' GROUP BY order_id"
)


async def refund_rows(data_dir: Path, url: str | None) -> dict[str, int]:
    """order id -> the workflows' refunds in the payments ledger."""
    if url is None:
        with sqlite3.connect(data_dir / "payments.db") as conn:
            return {str(o): int(n) for o, n in conn.execute(REFUNDS)}
    conn = await asyncpg.connect(url)
    try:
        return {str(r[0]): int(r[1]) for r in await conn.fetch(REFUNDS)}
    finally:
        await conn.close()


@pytest.fixture(params=release_fixtures.RELEASES)
def release(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def check_services_work_on_release_data(
    release: str, mesh_base: Path, dialect: str, url: str | None
) -> None:
    tasks = release_fixtures.tasks(release, dialect)
    data_dir = mesh_base / "data"  # running_mesh's data directory
    before = await refund_rows(data_dir, url)
    with running_mesh(mesh_base, database_url=url, service_env=KEEP) as mesh:
        refunded = await get_task(mesh, tasks["refunded"]["user"], tasks["refunded"]["task_id"])
        assert refunded.status is Status.COMPLETED
        assert (refunded.data or {})["decision"] == "refunded"
        explained = await get_task(mesh, "C-01", tasks["explained"]["task_id"])
        assert (explained.data or {})["rule"] == "outside_window"
        answered = await get_task(mesh, "C-01", tasks["answered"]["task_id"])
        assert (answered.data or {})["decision"] == "refunded"
        question = await get_task(mesh, "C-01", tasks["question"]["task_id"])
        assert question.waiting_reason is WaitingReason.INPUT
        if "partial" in tasks:
            partial = await get_task(mesh, "C-01", tasks["partial"]["task_id"])
            receipt = (partial.data or {})["receipt"]
            assert receipt["amount_cents"] == tasks["partial"]["amount_cents"]
        if "push" in tasks:
            # The customer's config on the waiting approval is still theirs.
            config = tasks["push"]["approval"]
            listed = await rpc(
                mesh,
                config["user"],
                "ListTaskPushNotificationConfigs",
                {"taskId": config["task_id"]},
            )
            found = listed["result"]["configs"]
            assert [(c["id"], c["url"]) for c in found] == [(config["id"], tasks["push"]["url"])]

        approval = tasks["approval"]
        waiting = await get_task(mesh, approval["user"], approval["task_id"])
        assert waiting.waiting_reason is WaitingReason.APPROVAL
        decided = await approve(mesh, "approver-1", ("approver",), approval["task_id"])
        assert decided.status is Status.COMPLETED, decided.error
        final = await get_task(mesh, approval["user"], approval["task_id"])
        assert (final.data or {})["decision"] == "refunded"
        assert (final.data or {})["approved_by"] == "approver-1"

        # The release's refunds and the one just approved, once each.
        order = approval["order_id"]
        assert await refund_rows(data_dir, url) == {**before, order: before.get(order, 0) + 1}
        if url is None:
            stores = [
                (f"sqlite:///{mesh.data_dir / f'{name}.db'}", schema)
                for name, group in schemas.SQLITE_FILES.items()
                for schema in group
                if schema in schemas.LIVE
            ]
        else:
            stores = [(url, schema) for schema in schemas.LIVE]
        for store_url, schema in stores:
            assert (await current(store_url, schema)).up_to_date, schema.name


async def test_services_upgrade_and_work_on_the_sqlite_files_of_a_release(
    release: str, tmp_path: Path
) -> None:
    release_fixtures.load_sqlite(release, tmp_path / "data")  # running_mesh's data directory
    await check_services_work_on_release_data(release, tmp_path, "sqlite", None)


@pytest.mark.postgres
async def test_services_upgrade_and_work_on_the_postgres_database_of_a_release(
    release: str, tmp_path: Path, postgres_server_url: str
) -> None:
    url = postgres.fresh_database(postgres_server_url)
    await release_fixtures.load_postgres(release, url)
    await check_services_work_on_release_data(release, tmp_path, "postgresql", url)
