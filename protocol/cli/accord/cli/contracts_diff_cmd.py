"""`accord contracts diff OLD NEW`: is a change of the contracts compatible for their callers?

Exit 0 when nothing breaks (or every break is on the reviewed list given with --intended),
1 on an unannounced breaking change, 2 when a side or the list cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import typer
from rich.console import Console
from rich.table import Table

from accord.contracts.errors import AccordError
from accord.contracts.evolution.diff import DiffReport, diff_sets
from accord.contracts.evolution.findings import Finding
from accord.contracts.evolution.intended import IntendedBreaks, load_intended_breaks
from accord.contracts.evolution.release import Workspace
from accord.contracts.evolution.sources import SPECS_IN_REPO, load_side

EXIT_BREAKING: Final = 1
EXIT_UNREADABLE: Final = 2
VALUE_WIDTH: Final = 40
LOG_WIDTH: Final = 200


def _short(value: Any) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_WIDTH else text[: VALUE_WIDTH - 3] + "..."


def _verdict(finding: Finding, intended: IntendedBreaks) -> str:
    if not finding.breaking:
        return "compatible"
    return "breaking (intended)" if intended.excuses(finding) else "breaking"


def diff_document(report: DiffReport, intended: IntendedBreaks) -> dict[str, Any]:
    rows = [
        {**f.to_dict(), "intended": f.breaking and intended.excuses(f) is not None}
        for f in report.findings
    ]
    return {
        "old": report.old,
        "new": report.new,
        "findings": rows,
        "breaking": sum(1 for f in report.findings if f.breaking),
        "unannounced": sum(
            1 for r in rows if r["compatibility"] == "breaking" and not r["intended"]
        ),
        "unused_intended_breaks": [b.model_dump() for b in intended.unused(report.findings)],
        "notes": report.notes,
    }


def print_document(document: dict[str, Any]) -> None:
    console = Console()
    if not console.is_terminal:  # a log (CI) is read in full: do not fold rule names
        console = Console(width=LOG_WIDTH)
    table = Table(title=f"Contract changes {document['old']} -> {document['new']}")
    for column in ("verdict", "contract", "rule", "path", "old", "new"):
        table.add_column(column, overflow="fold")
    styles = {"compatible": "green", "breaking": "bold red", "breaking (intended)": "yellow"}
    for row in document["findings"]:
        verdict = (
            "compatible"
            if row["compatibility"] == "compatible"
            else ("breaking (intended)" if row["intended"] else "breaking")
        )
        table.add_row(
            f"[{styles[verdict]}]{verdict}[/]",
            row["contract"],
            row["rule"],
            row["path"] or "/",
            _short(row["old"]),
            _short(row["new"]),
        )
    if document["findings"]:  # an empty table says less than the count line below
        console.print(table)
    for note in document["notes"]:
        console.print(f"note: {note}")
    for entry in document["unused_intended_breaks"]:
        console.print(
            f"note: intended break matches no change: {entry['contract']} {entry['rule']} "
            f"{entry['path']}"
        )
    console.print(
        f"{len(document['findings'])} changes, {document['breaking']} breaking, "
        f"{document['unannounced']} not on the list of intended breaks"
    )


def _spec_folders(repo: Path | None) -> tuple[str, ...]:
    """The contract folders of the workspace ``repo`` (or the current folder) is in, as its
    [tool.accord.release] lists them; the framework's own outside a workspace."""
    try:
        ws = Workspace.find(repo or Path.cwd())
    except AccordError:
        return (SPECS_IN_REPO,)
    return tuple(str(p.relative_to(ws.root)) for p in ws.specs)


def diff(
    old: str = typer.Argument(help="Old side: a contract file, a folder or a git revision"),
    new: str = typer.Argument(help="New side: a contract file, a folder or a git revision"),
    intended_file: Path = typer.Option(
        None, "--intended", help="Reviewed list of intended breaks (YAML); they do not fail"
    ),
    repo: Path = typer.Option(None, "--repo", help="Git repository of revisions (default: .)"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Classify every change between two versions of the contracts; exit 1 on a breaking one."""
    try:
        intended = (
            load_intended_breaks(intended_file) if intended_file is not None else IntendedBreaks()
        )
        folders = _spec_folders(repo)
        report = diff_sets(load_side(old, repo, folders), load_side(new, repo, folders))
        if not intended.applies_to(report.old):
            report.notes.append(
                f"intended breaks ignored: reviewed against {intended.against}, not {report.old}"
            )
            intended = IntendedBreaks()
    except AccordError as error:
        typer.echo(f"accord contracts diff: {error.message}", err=True)
        raise typer.Exit(EXIT_UNREADABLE) from None
    document = diff_document(report, intended)
    if as_json:
        typer.echo(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        print_document(document)
    if document["unannounced"]:
        raise typer.Exit(EXIT_BREAKING)


def add_to(contracts_app: typer.Typer) -> None:
    contracts_app.command("diff")(diff)
