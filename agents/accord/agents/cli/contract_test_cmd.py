"""`accord contract-test URL...`: the contract test kit against any A2A agent or MCP tool server.

Exit status: 0 when nothing violated the contract, 1 on any violation, 2 on bad usage.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import typer
from rich.console import Console

from accord.agents.cli.credentials import given_token
from accord.contracts.errors import AccordError
from accord.contracts.loading import ContractFileError
from accord.contracts.manifest import requirement_ids
from accord.contracts.tools import load_tool_contract


def register(app: typer.Typer) -> None:
    @app.command("contract-test")
    def contract_test(
        urls: list[str] = typer.Argument(help="A2A agent base URLs and/or MCP server URLs"),
        token: str = typer.Option(
            "", "--token", help="Bearer token for authenticated checks (default: ACCORD_TOKEN)"
        ),
        api_key: str = typer.Option("", "--api-key", help="API key (X-API-Key) instead of a token"),
        other_token: str = typer.Option(
            "", "--other-token", help="A second tenant's token, for the cross-tenant check"
        ),
        skip: list[str] = typer.Option(
            [], "--skip", help="Requirement ID the implementation does not claim (repeatable)"
        ),
        probe: Path | None = typer.Option(
            None, "--probe", help="JSON probe file (skill/tool inputs); see docs/contract-test.md"
        ),
        contract: list[Path] = typer.Option(
            [], "--contract", help="Tool contract YAML for third-party tools (repeatable)"
        ),
        junit: Path | None = typer.Option(None, "--junit", help="Write JUnit XML here"),
        timeout: float = typer.Option(10.0, "--timeout", min=0.1, help="Seconds per call"),
    ) -> None:
        """Check agents and tool servers against the Accord contract (requirement IDs)."""
        # Imported here: the kit pulls in the A2A and MCP SDKs, which other commands do not need.
        from accord.protocol.kit import (
            Credential,
            KitOptions,
            load_probes,
            render_table,
            run_kit,
            write_junit,
        )

        console = Console(width=int(os.environ.get("COLUMNS", "160")))
        unknown = sorted(set(skip) - requirement_ids())
        if unknown:
            raise typer.BadParameter(f"unknown requirement ID(s) {unknown}", param_hint="--skip")
        try:
            options = KitOptions(
                credential=Credential(token=given_token(token), api_key=api_key or None),
                other=Credential(token=other_token or None),
                skip=frozenset(skip),
                timeout_s=timeout,
                probes=load_probes(probe),
                contracts=tuple(load_tool_contract(p) for p in contract),
            )
        except (AccordError, ContractFileError) as error:
            raise typer.BadParameter(str(error)) from None
        report = asyncio.run(run_kit(urls, options))
        render_table(report, console)
        if junit is not None:
            write_junit(report, junit)
            console.print(f"JUnit XML: {junit}")
        raise typer.Exit(0 if report.ok else 1)
