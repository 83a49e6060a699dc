"""Every route test of tests/mesh/test_routes.py again, with every store on PostgreSQL.

The tests are imported, not copied: pytest collects them here a second time, and this
module's ``mesh`` fixture (all five services on one fresh PostgreSQL database: task stores,
workflow log, ledgers and demo data) replaces the session's SQLite mesh for them. So the
cross-service suite runs on both backends, and a route added there runs on both.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mesh.support import Mesh, running_mesh
from tests.mesh.test_routes import (
    test_another_customers_order_is_not_found,
    test_approval_errors_and_the_approval_queue,
    test_missing_order_number_is_asked_for,
    test_o1001_refunded_automatically_with_updates_naming_nodes,
    test_o1002_outside_the_window,
    test_o1003_final_sale,
    test_o1004_waits_for_approval_the_customer_cannot_approve,
    test_o1005_evidence_is_asked_and_answered_in_the_same_task,
    test_o1006_rejected_by_the_approver,
)
from tests.support import postgres

pytestmark = pytest.mark.timeout(240)

__all__ = [
    "test_another_customers_order_is_not_found",
    "test_approval_errors_and_the_approval_queue",
    "test_missing_order_number_is_asked_for",
    "test_o1001_refunded_automatically_with_updates_naming_nodes",
    "test_o1002_outside_the_window",
    "test_o1003_final_sale",
    "test_o1004_waits_for_approval_the_customer_cannot_approve",
    "test_o1005_evidence_is_asked_and_answered_in_the_same_task",
    "test_o1006_rejected_by_the_approver",
]


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory, postgres_server_url: str) -> Iterator[Mesh]:
    url = postgres.fresh_database(postgres_server_url)
    with running_mesh(tmp_path_factory.mktemp("pg-routes"), database_url=url) as started:
        assert started.env["ACCORD_DATABASE_URL"] == url
        yield started
