"""An application's commands plugged into `accord` (entry point group ``accord.commands``), as
a team's own distribution would: a dist-info folder on the import path with its
entry_points.txt, and the modules it names. Real processes: `python -m accord.cli.main`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from accord.protocol.plugins import APPS_GROUP, COMMANDS_GROUP, entry_points

TABLE = """
from accord.cli.lazy_group import LazyCommand

COMMANDS = (
    LazyCommand("hello", "notes_cmds.hello_cmd", "Say hello to NAME."),
    LazyCommand("serve", "notes_cmds.hello_cmd", "Not the framework's serve."),
)
"""
HELLO = '''
import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def hello(name: str) -> None:
        """Say hello to NAME."""
        typer.echo(f"hello {name}")

    @app.command("serve")
    def not_serve() -> None:
        """Not the framework's serve."""
        typer.echo("shadowed")
'''


def _install(site: Path, dist: str, entry_points_txt: str) -> None:
    info = site / f"{dist}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points_txt)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder on PYTHONPATH with two applications: one that works, one whose table is gone."""
    site = tmp_path / "site"
    (site / "notes_cmds").mkdir(parents=True)
    (site / "notes_cmds" / "__init__.py").write_text("")
    (site / "notes_cmds" / "table.py").write_text(TABLE)
    (site / "notes_cmds" / "hello_cmd.py").write_text(HELLO)
    _install(site, "notes", "[accord.commands]\nnotes = notes_cmds.table:COMMANDS\n")
    _install(site, "broken", "[accord.commands]\nbroken = no_such_module:COMMANDS\n")
    return site


def _accord(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_")}
    env.update(PYTHONPATH=str(site), ACCORD_DATA_DIR=str(site.parent / "data"))
    return subprocess.run(
        [sys.executable, "-m", "accord.cli.main", *args],
        env=env,
        cwd=site.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_application_s_command_is_listed_and_runs(site: Path) -> None:
    listed = _accord(site, "--help")
    assert listed.returncode == 0, listed.stderr
    assert "hello          Say hello to NAME." in listed.stdout
    ran = _accord(site, "hello", "world")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "hello world\n"


def test_a_broken_application_is_named_and_the_others_still_work(site: Path) -> None:
    listed = _accord(site, "--help")
    assert listed.returncode == 0
    assert "accord: broken's commands not loaded (no_such_module:COMMANDS" in listed.stderr
    assert "hello" in listed.stdout


def test_an_application_never_takes_over_a_framework_command(site: Path) -> None:
    shown = _accord(site, "serve", "--help")
    assert shown.returncode == 0, shown.stderr
    assert "Start one service." in shown.stdout
    assert "shadowed" not in shown.stdout


def test_the_reader_finds_what_the_installed_distributions_declare() -> None:
    """This checkout's: the refund assistant's commands and app file (agents/pyproject.toml)."""
    assert entry_points(COMMANDS_GROUP)["refund-assistant"] == (
        "accord.agents.cli.commands:COMMANDS"
    )
    assert entry_points(APPS_GROUP)["refund-assistant"] == "accord.agents.cli.commands:APP"
    assert "orchestrator" in entry_points("accord.services")


def test_loading_an_application_s_module_leaves_the_framework_s_placeholders(site: Path) -> None:
    """In one process (a test's CliRunner, a shell's completion): running `hello` imports the
    module that also registers a `serve`; the framework's `serve` is still the one listed."""
    script = (
        "import typer.main\n"
        "from accord.cli.main import app\n"
        "group = typer.main.get_command(app)\n"
        "ctx = typer.Context(group)\n"
        "group.get_command(ctx, 'hello')\n"
        "print(group.get_command(ctx, 'serve').help.splitlines()[0])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_")}
    env.update(PYTHONPATH=str(site), ACCORD_DATA_DIR=str(site.parent / "data"))
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Start one service."
