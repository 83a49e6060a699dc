"""`accord contracts ...`: show, export and diff the contract."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from accord.cli import contracts_diff_cmd, contracts_release_cmd
from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.errors import REGISTRY
from accord.contracts.export import export_all
from accord.contracts.keys import CONTRACT_VERSION
from accord.contracts.status import TRANSITIONS
from accord.contracts.tools import shipped_tool_contracts
from accord.protocol.a2a.errors import a2a_error_document

A2A_ERRORS_FILE = "a2a-errors.json"

contracts_app = typer.Typer(help="Show, export or diff the Accord contract.", no_args_is_help=True)
contracts_diff_cmd.add_to(contracts_app)
contracts_release_cmd.add_to(contracts_app)


@contracts_app.command("show")
def show() -> None:
    """Print the versions, the task lifecycle and the error registry."""
    console = Console()
    versions = Table(title=f"Contract versions (mesh contract {CONTRACT_VERSION})")
    for col in ("contract", "version", "also serves"):
        versions.add_column(col)
    for name, agent in sorted(shipped_agent_contracts().items()):
        versions.add_row(f"agent:{name}", agent.version, ", ".join(agent.also_serves) or "-")
    for name, tool in sorted(shipped_tool_contracts().items()):
        versions.add_row(f"tool:{name}", tool.version, ", ".join(tool.also_serves) or "-")
    console.print(versions)
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
    # A2A's own errors as contract codes: derived from a2a-sdk's tables, which accord.contracts
    # cannot import, so the protocol layer adds them here.
    a2a_errors = directory / A2A_ERRORS_FILE
    a2a_errors.write_text(
        json.dumps(a2a_error_document(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    written.append(a2a_errors)
    for path in written:
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    app.add_typer(contracts_app, name="contracts")
