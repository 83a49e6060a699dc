"""`accord contracts compat` and `accord contracts release VERSION`: releases that agree.

compat (what `make compat` runs on every CI run): the distributions' one version, the changelog,
the recorded baselines and the list of intended breaks agree, and the working tree's contracts
break nothing of the last release that is not on that list. Exit 0 when all hold, 1 when one
does not, 2 when something cannot be read.

release (what `make release VERSION=X` runs): records X when compat would pass for it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Final

import typer

from accord.cli.contracts_diff_cmd import (
    EXIT_BREAKING,
    EXIT_UNREADABLE,
    diff_document,
    print_document,
)
from accord.contracts.errors import AccordError
from accord.contracts.evolution.release import Workspace, check, cut

ROOT_HELP: Final = (
    "Workspace root: the folder whose pyproject.toml has [tool.accord.release] "
    "(default: the nearest one, here or above)"
)


def _workspace(root: Path | None) -> Workspace:
    return Workspace.find(Path.cwd()) if root is None else Workspace.load(root)


def compat(
    root: Path | None = typer.Option(None, "--root", help=ROOT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Check version, changelog and contracts against the last recorded release."""
    try:
        ws = _workspace(root)
        result = check(ws)
    except (AccordError, ValueError, OSError) as error:
        message = error.message if isinstance(error, AccordError) else str(error)
        typer.echo(f"accord contracts compat: {message}", err=True)
        raise typer.Exit(EXIT_UNREADABLE) from None
    last = result.baseline.record
    report = diff_document(result.report, result.intended)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "version": result.version,
                    "release": last.model_dump(mode="json"),
                    "problems": result.problems,
                    **report,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        typer.echo(
            f"compat: version {result.version}; the contracts of the working tree against "
            f"{last.tag} ({result.baseline.folder}, commit {(last.commit or '?')[:12]})"
        )
        print_document(report)
        for problem in result.problems:
            typer.echo(f"compat: FAILED: {problem}", err=True)
    if result.problems:
        raise typer.Exit(EXIT_BREAKING)


def release(
    version: str = typer.Argument(help="The release's version, X.Y.Z"),
    root: Path | None = typer.Option(None, "--root", help=ROOT_HELP),
) -> None:
    """Record release VERSION (baseline, changelog, versions) when compat holds for it."""
    try:
        baseline = cut(_workspace(root), version, dt.date.today())
    except (AccordError, ValueError, OSError) as error:
        message = error.message if isinstance(error, AccordError) else str(error)
        typer.echo(f"accord contracts release: {message}", err=True)
        raise typer.Exit(EXIT_BREAKING) from None
    typer.echo(
        f"release {version} recorded in {baseline.folder}; the changelog, the versions and "
        "the list of intended breaks are updated: review and commit them"
    )


def add_to(contracts_app: typer.Typer) -> None:
    contracts_app.command("compat")(compat)
    contracts_app.command("release")(release)
