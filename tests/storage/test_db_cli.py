"""`accord db current` and `accord db upgrade` on every release's databases of every service."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from accord.cli.main import app
from tests.storage import release_fixtures

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
# Each agent's sent-message keys (idempotent send): new since v0.2, made by upgrade.
SEND_SCHEMAS = {(s, f"a2a_sends_{s}") for s in ("orchestrator", "policy", "risk")}
SCHEMAS = V0_1_SCHEMAS | PUSH_SCHEMAS | SEND_SCHEMAS
# Every one of v0.2's is versioned from v0.2 on.
V0_2_SCHEMAS = {schema for _, schema in V0_1_SCHEMAS | PUSH_SCHEMAS}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"ACCORD_DATABASE_URL": ""})
    return result.exit_code, result.output


def check(release: str, where: list[str]) -> None:
    code, out = run("db", "current", *where, "--json")
    rows = json.loads(out)
    assert code == (0 if all(r["up_to_date"] for r in rows) else 1)  # 1: a schema is behind
    assert {(r["service"], r["schema"]) for r in rows} == SCHEMAS
    unversioned = {(r["service"], r["schema"]) for r in rows if r["unversioned_v0_1"]}
    if release in release_fixtures.UNVERSIONED:
        assert code == 1  # v0.1, never upgraded
        assert all(r["current"] is None for r in rows)
        assert unversioned == V0_1_SCHEMAS
    else:
        assert not unversioned
        assert all(r["current"] is not None for r in rows if r["schema"] in V0_2_SCHEMAS)
    was = {(r["service"], r["schema"]): r["current"] for r in rows}

    code, out = run("db", "upgrade", *where, "--json")
    assert code == 0, out
    upgraded = json.loads(out)
    assert all(r["up_to_date"] for r in upgraded)
    assert {(r["service"], r["schema"]): r["before"] for r in upgraded} == was

    code, out = run("db", "current", *where, "--json")
    assert code == 0, out
    assert all(r["up_to_date"] and not r["unversioned_v0_1"] for r in json.loads(out))

    code, out = run("db", "current", "payments", *where)
    assert code == 0
    assert "payments" in out
    assert "policy" not in out


@pytest.mark.parametrize("release", release_fixtures.RELEASES)
def test_db_commands_on_the_sqlite_files_of_a_release(release: str, tmp_path: Path) -> None:
    release_fixtures.load_sqlite(release, tmp_path)
    check(release, ["--data-dir", str(tmp_path)])


@pytest.mark.postgres
@pytest.mark.parametrize("release", release_fixtures.RELEASES)
def test_db_commands_on_the_postgres_database_of_a_release(release: str, postgres_url: str) -> None:
    asyncio.run(release_fixtures.load_postgres(release, postgres_url))  # the CLI runs its own loop
    check(release, ["--database-url", postgres_url])


def test_unknown_service_and_unreachable_database(tmp_path: Path) -> None:
    code, out = run("db", "current", "nosuch", "--data-dir", str(tmp_path))
    assert code == 2
    assert "unknown service" in out
    code, _ = run("db", "upgrade", "--database-url", "postgresql://nobody@127.0.0.1:1/none")
    assert code == 2
