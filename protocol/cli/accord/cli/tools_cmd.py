"""`accord tools ...`: check a live MCP server against tool contracts; list configured servers.

`accord tools check URL` sends the user's credential (``--token`` / ``--api-key``, else
``ACCORD_TOKEN`` / ``ACCORD_API_KEY``, else a development token of the local secret): a tool
server lists its tools only to an authenticated caller.

`accord tools check URL` exit status: 0 the server keeps its contracts, 1 it breaks them
(a table of findings says how), 2 the check could not run (unreachable, bad contract file).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from accord.cli.credentials import (
    API_KEY_HELP,
    TOKEN_HELP,
    given_api_key,
    given_token,
    print_error,
)
from accord.contracts.errors import AccordError
from accord.contracts.tools import shipped_tool_contracts
from accord.protocol.auth import ROLE_CUSTOMER, mint_token
from accord.protocol.mcp.config import ServerSpec, describe, load_config, resolve_contract
from accord.protocol.mcp.contract_check import CheckReport, check_server
from accord.protocol.mcp.credentials import StaticCredential

EXIT_VIOLATION = 1
EXIT_FAILED = 2

tools_app = typer.Typer(
    help="Check MCP tool servers against their contracts.", no_args_is_help=True
)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _print_report(console: Console, report: CheckReport) -> None:
    console.print(
        f"[bold]{report.target}[/] lists {len(report.listed)} tools: "
        f"{', '.join(report.listed) or '(none)'}"
    )
    console.print(f"checked against: {', '.join(report.checked) or '(no contract)'}")
    if report.ok:
        console.print(f"[green]OK[/]: {len(report.checked)} tools keep their contracts")
        return
    table = Table(title=f"Contract violations ({len(report.findings)})")
    for col in ("tool", "finding", "where", "contract says", "server says"):
        table.add_column(col)
    for f in report.findings:
        table.add_row(
            f.tool or "-",
            f.kind.value,
            f.where or "-",
            _short(f.expected) if f.expected is not None else "-",
            _short(f.actual) if f.actual is not None else "-",
        )
    console.print(table)
    for f in report.findings:
        console.print(f"[red]CONTRACT_VIOLATION[/] {f.tool or '-'}: {f.message}")


@tools_app.command("check")
def check(
    url: str = typer.Argument(help="MCP endpoint, e.g. http://127.0.0.1:8710/mcp"),
    contract: list[str] = typer.Option(
        [],
        "--contract",
        "-c",
        help="Shipped tool name or contract YAML file (repeatable); default: the shipped "
        "contracts whose names the server lists",
    ),
    timeout: float = typer.Option(10.0, help="Seconds to wait for the server"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
    token: str | None = typer.Option(None, "--token", help=TOKEN_HELP),
    api_key: str | None = typer.Option(None, "--api-key", help=API_KEY_HELP),
) -> None:
    """List a live server's tools and check them against tool contracts."""
    console = Console()
    bearer, key = given_token(token), given_api_key(api_key)
    if not bearer and not key:
        # Signed with this machine's secret: right for `accord up`, useless elsewhere.
        from accord.protocol.plugins import dev_user

        bearer = mint_token(dev_user(), [ROLE_CUSTOMER], ttl_s=300)
    credential = StaticCredential(token=bearer, api_key=key)
    try:
        shipped = shipped_tool_contracts()
        contracts = [
            resolve_contract(ref, shipped, Path("<command line>"), "--contract") for ref in contract
        ]
        spec = ServerSpec.http(url, url, contracts)
        report = asyncio.run(check_server(spec, timeout_s=timeout, credential=credential))
    except AccordError as err:
        print_error(err, console)
        raise typer.Exit(EXIT_FAILED) from None
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_report(console, report)
    if not report.ok:
        raise typer.Exit(EXIT_VIOLATION)


@tools_app.command("list")
def list_(
    config: Path | None = typer.Option(
        None,
        "--config",
        help="Tools configuration file (default: ACCORD_TOOLS_CONFIG, else the installed "
        "application's)",
    ),
) -> None:
    """Print the configured tool servers and the tools each one must serve."""
    from accord.protocol.plugins import installed_app

    console = Console()
    built_in = installed_app()
    try:
        loaded = load_config(config, default=built_in.tools if built_in else None)
    except AccordError as err:
        print_error(err, console)
        raise typer.Exit(EXIT_FAILED) from None
    table = Table(title=f"Tool servers ({loaded.source})")
    for col in ("server", "transport", "target", "tools"):
        table.add_column(col)
    for row in describe(loaded):
        table.add_row(row["server"], row["transport"], row["target"], ", ".join(row["tools"]))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(tools_app, name="tools")
