"""`accord contract-test URL...`: the contract test kit against any A2A agent or MCP tool server.

With no URL, in an application's folder (``--app``, else the accord.yaml of this folder or the
nearest one above; docs/apps.md), it checks that application's services at their URLs, with the
probes, tool contracts, skips and token scopes its ``contract_test`` section names (the token:
the kit's own, `accord keys token kit`).

Exit status: 0 when nothing violated the contract, 1 on any violation, 2 on bad usage. The kit's
own command, ``accord-contract-test``, takes the same flags (tests/kit/test_cli.py checks it).
"""

from __future__ import annotations

from pathlib import Path

import typer

from accord.cli.credentials import given_token


def register(app: typer.Typer) -> None:
    @app.command("contract-test")
    def contract_test(
        urls: list[str] = typer.Argument(
            None,
            help="A2A agent base URLs and/or MCP server URLs (none: the application's services)",
        ),
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
        app_file: Path | None = typer.Option(
            None,
            "--app",
            help="With no URL: the application's file (default: accord.yaml here or above)",
        ),
    ) -> None:
        """Check agents and tool servers against the Accord contract (requirement IDs)."""
        # Imported here: the kit pulls in the A2A and MCP SDKs, which other commands do not need.
        # It is the same run as the kit's own command, `accord-contract-test` (accord.kit.cli).
        from accord.kit.cli import UsageError, console, kit_options, run_and_report

        if not urls:
            from accord.cli.app_targets import app_targets

            target = app_targets(app_file)
            urls = list(target.urls)
            probe = probe or target.probes
            contract = [*contract, *target.contracts]
            skip = [*skip, *target.skip]
            token = token or given_token("") or target.token()
            other_token = other_token or target.other_token()
        try:
            options = kit_options(
                token=given_token(token),
                api_key=api_key,
                other_token=other_token,
                skip=skip,
                probe=probe,
                contracts=contract,
                timeout_s=timeout,
            )
        except UsageError as error:
            raise typer.BadParameter(str(error)) from None
        raise typer.Exit(run_and_report(urls, options, junit, console()))
