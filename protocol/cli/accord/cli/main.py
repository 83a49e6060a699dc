"""`accord`: the command line. Each command group lives in its own module, imported only when
one of its commands runs (lazy_group.py); the table below names the framework's for the help
listing, and an installed application adds its own through the entry point group
``accord.commands`` (accord.protocol.plugins)."""

from __future__ import annotations

import sys

import typer

from accord.cli.lazy_group import LazyCommand, LazyGroup

COMMANDS_GROUP = "accord.commands"  # accord.protocol.plugins.COMMANDS_GROUP, without its import

_CLI = "accord.cli."

# The framework's commands, in listing order (an installed application's follow, in its own
# order); the summary is each command's own first docstring line (a test compares).
COMMANDS: tuple[LazyCommand, ...] = (
    LazyCommand("serve", _CLI + "serve_cmd", "Start one service."),
    LazyCommand(
        "card",
        _CLI + "card_cmd",
        "Show an A2A agent's card and whether it declares the Accord extensions.",
    ),
    LazyCommand(
        "call",
        _CLI + "call_cmd",
        "Send TEXT and/or --data to an A2A agent; show its updates and the final task.",
    ),
    LazyCommand(
        "contract-test",
        _CLI + "contract_test_cmd",
        "Check agents and tool servers against the Accord contract (requirement IDs).",
    ),
    LazyCommand(
        "up", _CLI + "up_cmd", "Start an application's services and keep them running until Ctrl-C."
    ),
    LazyCommand(
        "cluster",
        _CLI + "cluster_cmd",
        "Run every service as --replicas processes on one PostgreSQL, behind HAProxy.",
    ),
    LazyCommand(
        "new",
        _CLI + "new_cmd",
        "Make a new application: an agent, a tool server, their contracts, in folder NAME.",
    ),
    LazyCommand("contracts", _CLI + "contracts_cmd", "Show, export or diff the Accord contract."),
    LazyCommand("tools", _CLI + "tools_cmd", "Check MCP tool servers against their contracts."),
    LazyCommand("token", _CLI + "token_cmd", "Development tokens and the deny list."),
    LazyCommand("keys", _CLI + "keys_cmd", "Each service's signing keys: list, rotate, revoke."),
    LazyCommand("db", _CLI + "db_cmd", "Schema migrations of the services' databases."),
    LazyCommand(
        "webhook",
        _CLI + "webhook_cmd",
        "Receive push notifications on 127.0.0.1 and print each verified one.",
    ),
)


class AccordGroup(LazyGroup):
    table = COMMANDS
    plugin_group = COMMANDS_GROUP


app = typer.Typer(
    name="accord",
    help="Accord: agents over A2A, tools over MCP, one contract.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and usage errors: Typer's rich rendering costs ~0.15 s of imports per
    # invocation, half of the CLI's start budget (#16). Command output still uses rich.
    rich_markup_mode=None,
    cls=AccordGroup,
)


# The distribution that ships the command line; every Accord distribution has the same version
# (docs/contract-evolution.md "Releases and versions").
CLI_DISTRIBUTION = "accord-cli"


def _print_version(value: bool) -> None:
    if not value:
        return
    from importlib.metadata import version

    from accord.contracts.keys import CONTRACT_VERSION

    typer.echo(f"accord {version(CLI_DISTRIBUTION)} (mesh contract {CONTRACT_VERSION})")
    raise typer.Exit()


@app.callback()
def _root(
    _version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the package version and the mesh contract's version, then exit.",
    ),
) -> None:
    # A callback makes Typer build a group although no command is registered up front.
    pass


EXIT_BAD_SETTINGS = 2


def main() -> None:
    try:
        app()
    except ValueError as error:
        # A configuration mistake is the user's to fix: one line that names the variable. A
        # SettingsError can only come from the settings module, imported only if it was used.
        settings = sys.modules.get("accord.protocol.settings")
        if settings is None or not isinstance(error, settings.SettingsError):
            raise
        print(f"accord: invalid configuration: {error}", file=sys.stderr)
        sys.exit(EXIT_BAD_SETTINGS)


if __name__ == "__main__":
    main()
