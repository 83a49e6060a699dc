"""`accord`: the command line. Each command group lives in its own module and registers here."""

from __future__ import annotations

import sys

import typer

from accord.agents.cli import (
    approve_cmd,
    call_cmd,
    card_cmd,
    contract_test_cmd,
    contracts_cmd,
    db_cmd,
    demo_cmd,
    refund_cmd,
    serve_cmd,
    stats_cmd,
    tasks_cmd,
    token_cmd,
    tools_cmd,
    up_cmd,
    webhook_cmd,
)
from accord.protocol.settings import SettingsError

app = typer.Typer(
    name="accord",
    help="Accord: agents over A2A, tools over MCP, one contract.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (
    contracts_cmd,
    serve_cmd,
    card_cmd,
    call_cmd,
    tools_cmd,
    contract_test_cmd,
    up_cmd,
    refund_cmd,
    approve_cmd,
    tasks_cmd,
    demo_cmd,
    token_cmd,
    stats_cmd,
    db_cmd,
    webhook_cmd,
):
    module.register(app)


EXIT_BAD_SETTINGS = 2


def main() -> None:
    try:
        app()
    except SettingsError as error:
        # A configuration mistake is the user's to fix: one line that names the variable.
        print(f"accord: invalid configuration: {error}", file=sys.stderr)
        sys.exit(EXIT_BAD_SETTINGS)


if __name__ == "__main__":
    main()
