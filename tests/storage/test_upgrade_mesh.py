"""The services start on the databases of the last release (the v0.1 fixture, with data),
upgrade them, and go on working: the old tasks read back, a refund that waited for approval
since v0.1 is approved and issued, and the ledger still has the old refunds (SQLite and
PostgreSQL, five real processes each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.contracts.status import Status, WaitingReason
from accord.protocol.storage.migrate import current
from tests.mesh.support import SERVICES, approve, get_task, running_mesh
from tests.storage import schemas, v0_1
from tests.support import postgres

pytestmark = pytest.mark.timeout(300)

# However old the fixture is, its finished tasks are still there to read: the default
# retention (30 days after their last change) would delete them at start.
KEEP = {n: {"ACCORD_TASK_RETENTION_S": str(100 * 365 * 86_400)} for n in SERVICES}


async def check_services_work_on_v0_1_data(mesh_base: Path, dialect: str, url: str | None) -> None:
    tasks = v0_1.tasks(dialect)
    with running_mesh(mesh_base, database_url=url, service_env=KEEP) as mesh:
        refunded = await get_task(mesh, tasks["refunded"]["user"], tasks["refunded"]["task_id"])
        assert refunded.status is Status.COMPLETED
        assert (refunded.data or {})["decision"] == "refunded"
        explained = await get_task(mesh, "C-01", tasks["explained"]["task_id"])
        assert (explained.data or {})["rule"] == "outside_window"

        approval = tasks["approval"]
        waiting = await get_task(mesh, approval["user"], approval["task_id"])
        assert waiting.waiting_reason is WaitingReason.APPROVAL
        decided = await approve(mesh, "approver-1", ("approver",), approval["task_id"])
        assert decided.status is Status.COMPLETED, decided.error
        final = await get_task(mesh, approval["user"], approval["task_id"])
        assert (final.data or {})["decision"] == "refunded"
        assert (final.data or {})["approved_by"] == "approver-1"

        if url is None:
            # v0.1's refunds and the one just approved, once each.
            assert mesh.refund_rows() == {"O-1001": 1, "O-1005": 1, "O-1004": 1}
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


async def test_services_upgrade_and_work_on_v0_1_sqlite_files(tmp_path: Path) -> None:
    v0_1.load_sqlite(tmp_path / "data")  # running_mesh's data directory
    await check_services_work_on_v0_1_data(tmp_path, "sqlite", None)


@pytest.mark.postgres
async def test_services_upgrade_and_work_on_a_v0_1_postgres_database(
    tmp_path: Path, postgres_server_url: str
) -> None:
    url = postgres.fresh_database(postgres_server_url)
    await v0_1.load_postgres(url)
    await check_services_work_on_v0_1_data(tmp_path, "postgresql", url)
