"""Real commerce and payments servers for the tool tests, on SQLite and on PostgreSQL.

The servers are session-scoped (a start costs seconds on a busy 2-core machine) and shared by
the test modules; tests that write use orders and idempotency keys of their own.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest

from tests.support import postgres
from tests.support.processes import Service, run_service
from tests.support.tool_auth import secret_env

START_DEADLINE_S = 90.0


@dataclass
class Backend:
    """Where a server keeps its data, and how a test reads it directly."""

    name: str
    data_dir: Path
    database_url: str | None

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "ACCORD_DATA_DIR": str(self.data_dir),
            "ACCORD_DATABASE_URL": self.database_url or "",
            "ACCORD_FAULTS": "",
            **secret_env(),  # tests sign their tokens with it (tests/support/tool_auth.py)
            **extra,
        }

    async def scalar(self, service: str, sql: str) -> int:
        """Run one counting query against the service's own database."""
        if self.database_url is None:
            with sqlite3.connect(self.data_dir / f"{service}.db") as conn:
                return int(conn.execute(sql).fetchone()[0])
        conn = await asyncpg.connect(self.database_url)
        try:
            return int(await conn.fetchval(sql))
        finally:
            await conn.close()

    async def ledger_rows(self, where: str = "1=1") -> int:
        return await self.scalar("payments", f"SELECT count(*) FROM payments_refunds WHERE {where}")


def make_backend(kind: str, request: pytest.FixtureRequest, tmp: Path) -> Backend:
    if kind == "postgres":
        server_url = request.getfixturevalue("postgres_server_url")
        return Backend(kind, tmp, postgres.fresh_database(server_url))
    return Backend(kind, tmp, None)


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Backend:
    return make_backend(request.param, request, tmp_path_factory.mktemp("tools-data"))


@pytest.fixture(scope="session")
def session_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tools-logs")


def serve(name: str, backend: Backend, logs: Path, **env: str) -> Iterator[Service]:
    with run_service(
        name,
        ["serve", name],
        env=backend.env(**env),
        log_dir=logs,
        health_path="/readyz",
        deadline_s=START_DEADLINE_S,
    ) as service:
        yield service


@pytest.fixture(scope="session")
def commerce(backend: Backend, session_logs: Path, payments: Service) -> Iterator[Service]:
    # Commerce reads refunds from the payments ledger (refunds.list): it is ready with payments.
    yield from serve("commerce", backend, session_logs, ACCORD_PAYMENTS_URL=payments.url)


@pytest.fixture(scope="session")
def payments(backend: Backend, session_logs: Path) -> Iterator[Service]:
    yield from serve("payments", backend, session_logs)


@pytest.fixture
def key() -> str:
    """A fresh idempotency key."""
    return f"test:{uuid.uuid4().hex}"


def mcp_url(service: Service) -> str:
    return f"{service.url}/mcp"


def on_ci() -> bool:
    return bool(os.environ.get("CI"))
