"""`accord contracts ...`: show and export the contract."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from accord.contracts.errors import REGISTRY
from accord.contracts.export import export_all
from accord.contracts.status import TRANSITIONS

contracts_app = typer.Typer(help="Show or export the Accord contract.", no_args_is_help=True)


@contracts_app.command("show")
def show() -> None:
    """Print the task lifecycle and the error registry."""
    console = Console()
    lifecycle = Table(title="Task lifecycle (legal transitions)")
    lifecycle.add_column("status")
    lifecycle.add_column("may become")
    for status, targets in TRANSITIONS.items():
        lifecycle.add_row(status.value, ", ".join(sorted(t.value for t in targets)) or "(terminal)")
    console.print(lifecycle)
    errors = Table(title="Error registry")
    for col in ("code", "retry", "JSON-RPC", "REST", "HTTP", "meaning"):
        errors.add_column(col)
    for code, spec in REGISTRY.items():
        errors.add_row(
            code.value,
            spec.retry.value,
            str(spec.jsonrpc_code),
            f"{spec.rest_status} {spec.rest_reason}",
            str(spec.http_status),
            spec.meaning,
        )
    console.print(errors)


@contracts_app.command("export")
def export(
    directory: Path = typer.Argument(help="Directory to write JSON Schema files to"),
) -> None:
    """Write JSON Schema documents for every contract format plus the shipped contracts."""
    written = export_all(directory)
    for path in written:
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    app.add_typer(contracts_app, name="contracts")
