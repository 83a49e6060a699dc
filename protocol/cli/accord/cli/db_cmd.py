"""`accord db upgrade` and `accord db current`: the schema migrations of the services' databases.

Each service keeps one or more schemas (an agent: its task table and its workflow log)
in its default database (a SQLite file in the data directory) or in ``--database-url``; each
schema has its own Alembic history and version table. Services upgrade their schemas when they
start; these commands do it ahead (a deploy step) or show where a database stands.

Exit status: 0 done (``current``: every schema at the head), 1 ``current`` found a schema
behind the head (or a v0.1 database never upgraded), 2 a database could not be reached or is
newer than this code.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from accord.contracts.errors import AccordError
from accord.protocol.service import ServiceSpec, discover_services
from accord.protocol.settings import ServeOptions, env_name
from accord.protocol.storage.migrate import Revision, current, upgrade
from accord.protocol.storage.schema import StoreRef
from accord.protocol.storage.urls import parse_url

EXIT_BEHIND = 1
EXIT_FAILED = 2

db_app = typer.Typer(help="Schema migrations of the services' databases.", no_args_is_help=True)

SERVICES_ARG = typer.Argument(None, help="Services (default: every installed service)")
DATABASE_OPT = typer.Option(
    "",
    "--database-url",
    help="PostgreSQL URL; default: ACCORD_DATABASE_URL, else each service's SQLite file",
)
DATA_DIR_OPT = typer.Option(
    None, "--data-dir", help="Data directory (default: ACCORD_DATA_DIR, else the project's .accord)"
)
JSON_OPT = typer.Option(False, "--json", help="Print JSON instead of a table")


def _selected(
    names: list[str] | None, database_url: str, data_dir: Path | None
) -> list[tuple[str, StoreRef]]:
    if data_dir is not None:
        # Written, not read: the settings (current()) take it from here, for the SQLite
        # defaults of every service's stores.
        os.environ[env_name("data_dir")] = str(data_dir)
    services = discover_services()
    unknown = sorted(set(names or ()) - set(services))
    if unknown:
        known = ", ".join(sorted(services)) or "none installed"
        raise typer.BadParameter(f"unknown service {', '.join(unknown)} (known: {known})")
    options = ServeOptions(database_url=database_url or None)
    chosen: list[ServiceSpec] = [services[n] for n in (names or sorted(services))]
    return [(spec.name, ref) for spec in chosen for ref in spec.stores(options)]


def _row(service: str, ref: StoreRef, revision: Revision) -> dict[str, object]:
    return {
        "service": service,
        "schema": revision.schema,
        "database": parse_url(ref.url).shown(),
        "current": revision.current,
        "head": revision.head,
        "unversioned_v0_1": revision.unversioned,
        "up_to_date": revision.up_to_date,
    }


def _print(rows: list[dict[str, object]], as_json: bool, title: str) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=title)
    for col in ("service", "schema", "database", "revision", "head"):
        table.add_column(col)
    for r in rows:
        now = r["current"] or ("v0.1 (unversioned)" if r["unversioned_v0_1"] else "(empty)")
        table.add_row(
            str(r["service"]), str(r["schema"]), str(r["database"]), str(now), str(r["head"])
        )
    Console().print(table)


def _run(work: Coroutine[Any, Any, list[dict[str, object]]]) -> list[dict[str, object]]:
    """Run the command's work; a contract error is one line on stderr and exit 2."""
    try:
        return asyncio.run(work)
    except AccordError as error:
        typer.echo(f"{error.code.value}: {error.message} {json.dumps(error.details)}", err=True)
        raise typer.Exit(EXIT_FAILED) from None


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def upgrade_cmd(
    services: list[str] | None = SERVICES_ARG,
    database_url: str = DATABASE_OPT,
    data_dir: Path | None = DATA_DIR_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Upgrade every schema of the services to the head revision (safe while they run)."""
    refs = _selected(services, database_url, data_dir)

    async def run() -> list[dict[str, object]]:
        rows = []
        for service, ref in refs:
            before, after = await upgrade(ref.url, ref.schema)
            row = _row(service, ref, after)
            row["before"] = before.current
            rows.append(row)
        return rows

    _print(_run(run()), as_json, "Upgraded")


@db_app.command("current")
def current_cmd(
    services: list[str] | None = SERVICES_ARG,
    database_url: str = DATABASE_OPT,
    data_dir: Path | None = DATA_DIR_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Show each schema's revision and the head this code would upgrade it to."""
    refs = _selected(services, database_url, data_dir)

    async def run() -> list[dict[str, object]]:
        return [_row(s, ref, await current(ref.url, ref.schema)) for s, ref in refs]

    rows = _run(run())
    _print(rows, as_json, "Schema revisions")
    if not all(r["up_to_date"] for r in rows):
        raise typer.Exit(EXIT_BEHIND)
