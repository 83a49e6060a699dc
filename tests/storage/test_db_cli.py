"""`accord db current` and `accord db upgrade` on the v0.1 databases of every service."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accord.agents.cli.main import app
from tests.storage import v0_1

# The orchestrator keeps one store, its workflow log: its A2A tasks are views of it (its v0.1
# task table is left as it was, unread).
V0_1_SCHEMAS = {
    ("commerce", "commerce"),
    ("orchestrator", "workflow"),
    ("payments", "payments"),
    ("policy", "a2a_tasks_policy"),
    ("risk", "a2a_tasks_risk"),
}
# Each agent's push notification tables: new since v0.1, so not there yet, and made by upgrade.
PUSH_SCHEMAS = {(s, f"a2a_push_{s}") for s in ("orchestrator", "policy", "risk")}
SCHEMAS = V0_1_SCHEMAS | PUSH_SCHEMAS


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"ACCORD_DATABASE_URL": ""})
    return result.exit_code, result.output


def check(where: list[str]) -> None:
    code, out = run("db", "current", *where, "--json")
    assert code == 1  # behind: v0.1, never upgraded
    rows = json.loads(out)
    assert {(r["service"], r["schema"]) for r in rows} == SCHEMAS
    assert all(r["current"] is None for r in rows)
    unversioned = {(r["service"], r["schema"]) for r in rows if r["unversioned_v0_1"]}
    assert unversioned == V0_1_SCHEMAS

    code, out = run("db", "upgrade", *where, "--json")
    assert code == 0, out
    assert all(r["up_to_date"] and r["before"] is None for r in json.loads(out))

    code, out = run("db", "current", *where, "--json")
    assert code == 0, out
    assert all(r["up_to_date"] and not r["unversioned_v0_1"] for r in json.loads(out))

    code, out = run("db", "current", "payments", *where)
    assert code == 0
    assert "payments" in out
    assert "policy" not in out


def test_db_commands_on_v0_1_sqlite_files(tmp_path: Path) -> None:
    v0_1.load_sqlite(tmp_path)
    check(["--data-dir", str(tmp_path)])


@pytest.mark.postgres
def test_db_commands_on_a_v0_1_postgres_database(postgres_url: str) -> None:
    asyncio.run(v0_1.load_postgres(postgres_url))  # the CLI runs its own event loop
    check(["--database-url", postgres_url])


def test_unknown_service_and_unreachable_database(tmp_path: Path) -> None:
    code, out = run("db", "current", "nosuch", "--data-dir", str(tmp_path))
    assert code == 2
    assert "unknown service" in out
    code, _ = run("db", "upgrade", "--database-url", "postgresql://nobody@127.0.0.1:1/none")
    assert code == 2
