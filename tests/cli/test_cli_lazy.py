"""The command line imports a command's module only when that command runs (#16).

Structural, not timed: each case runs the CLI in a fresh interpreter and lists the heavy
packages it imported. `accord --help` lists every command from main.py's table and the
installed application's (entry points ``accord.commands``, read from their light table module)
without importing any command module; a framework command does not even read the entry
points; `accord token` (help, mint, revoke) never loads the A2A SDK, MCP, SQLAlchemy,
OpenTelemetry or rich; `accord token --help` not even PyJWT or the settings model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

import accord.contracts
from accord.cli.lazy_group import LazyCommand
from accord.cli.main import COMMANDS, COMMANDS_GROUP, app
from accord.protocol.plugins import COMMANDS_GROUP as PLUGINS_GROUP
from accord.protocol.plugins import entry_points, load

SERVICE_STACK = frozenset({"a2a", "mcp", "sqlalchemy", "opentelemetry", "rich", "uvicorn"})

# Runs the CLI as `accord ARGS` in-process, then prints the top-level packages imported.
PROBE = """
import json, sys
from accord.cli.main import main
sys.argv = ["accord", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
tops = sorted({name.split(".")[0] for name in sys.modules})
cli = sorted(
    n for n in sys.modules
    if n.startswith(("accord.cli.", "accord.agents.cli.")) or n == "accord.protocol.plugins"
)
print(json.dumps({"tops": tops, "cli": cli}), file=sys.stderr)
"""


def _imported(tmp_path: Path, *args: str) -> tuple[set[str], set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"ACCORD_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    found = json.loads(done.stderr.strip().splitlines()[-1])
    return set(found["tops"]), set(found["cli"])


def test_help_imports_no_command_module(tmp_path: Path) -> None:
    tops, cli = _imported(tmp_path, "--help")
    assert cli == {
        "accord.cli.main",
        "accord.cli.lazy_group",
        "accord.protocol.plugins",
        "accord.agents.cli.commands",  # the refund assistant's table: its commands listed
    }
    assert not tops & (SERVICE_STACK | {"pydantic", "jwt", "httpx"}), tops


@pytest.mark.parametrize(
    "args",
    [
        ("token", "--user", "C-01"),
        ("token", "--user", "svc:kit", "--role", "service", "--scope", "orders.lookup"),
        ("token", "revoke", "--jti", "J-1"),
    ],
)
def test_token_commands_load_no_service_stack(tmp_path: Path, args: tuple[str, ...]) -> None:
    tops, cli = _imported(tmp_path, *args)
    assert cli == {
        "accord.cli.main",
        "accord.cli.lazy_group",
        "accord.cli.token_cmd",
    }
    assert not tops & SERVICE_STACK, tops


def test_token_help_loads_neither_jwt_nor_settings(tmp_path: Path) -> None:
    tops, _ = _imported(tmp_path, "token", "--help")
    assert not tops & (SERVICE_STACK | {"jwt", "pydantic_settings"}), tops


def test_an_application_command_loads_its_module_and_no_other(tmp_path: Path) -> None:
    _tops, cli = _imported(tmp_path, "approve", "--help")
    assert cli >= {"accord.protocol.plugins", "accord.agents.cli.approve_cmd"}
    assert "accord.agents.cli.demo_cmd" not in cli
    assert not {"accord.cli.serve_cmd", "accord.cli.up_cmd"} & cli


def _application_commands() -> list[LazyCommand]:
    found: list[LazyCommand] = []
    for value in entry_points(COMMANDS_GROUP).values():
        table = load(value)
        assert isinstance(table, tuple)
        found += table
    return found


def test_the_application_s_commands_come_from_its_entry_points() -> None:
    assert COMMANDS_GROUP == PLUGINS_GROUP  # main.py spells it out to skip an import
    names = [entry.name for entry in _application_commands()]
    assert names == ["console", "refund", "chat", "approve", "tasks", "demo", "stats"]
    assert not set(names) & {entry.name for entry in COMMANDS}  # none shadows the framework's


def test_the_table_lists_every_command_with_its_own_summary() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    ctx = typer.Context(group)
    for entry in [*COMMANDS, *_application_commands()]:
        command = group.get_command(ctx, entry.name)  # imports the module: the real command
        assert command is not None, entry.name
        assert command.name == entry.name
        assert command.get_short_help_str(limit=200) == entry.summary, entry.name


def test_contracts_package_names_load_on_first_use() -> None:
    for name in accord.contracts.__all__:
        assert getattr(accord.contracts, name) is not None, name
