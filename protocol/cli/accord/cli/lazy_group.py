"""A Typer group whose commands are imported only when they run.

`accord --help` lists every command from a table (name, module, one-line summary) without
importing any command module; `accord NAME ...` imports the one module that registers NAME.
A command module pulls in what its command needs (the A2A SDK, MCP, SQLAlchemy, OpenTelemetry),
and paying for all of them on every invocation cost 1-2 s of imports (#16).

An application's commands join the table through the entry point group ``accord.commands``
(accord.protocol.plugins): read only when the help lists every command or a name is not the
framework's own, so `accord serve NAME` never scans for them.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer import _click  # Typer's vendored Click: its types, for annotations only


@dataclass(frozen=True)
class LazyCommand:
    name: str
    module: str  # defines register(app: typer.Typer), which registers this command
    summary: str  # the help listing's line (tests/cli/test_cli_lazy.py: equals the command's)


class _Listed(TyperCommand):
    """Stands for a command not imported yet: its name and summary, for the help listing."""

    def __init__(self, entry: LazyCommand) -> None:
        super().__init__(entry.name, help=entry.summary)
        self.entry = entry


class LazyGroup(TyperGroup):
    """Subclass with ``table`` set and pass it as ``typer.Typer(cls=...)``."""

    table: ClassVar[tuple[LazyCommand, ...]] = ()
    # Entry points: an application's name = module:attribute, a tuple of LazyCommand.
    plugin_group: ClassVar[str | None] = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._listing = False
        self._plugins_read = self.plugin_group is None
        for entry in self.table:
            # Placeholders keep the names known (listing order, "did you mean" suggestions).
            self.commands.setdefault(entry.name, _Listed(entry))

    def plugins(self) -> tuple[LazyCommand, ...]:
        """The installed applications' commands: their table entries, nothing imported but the
        light modules that hold them. A framework command's name is never taken over."""
        if self.plugin_group is None:
            return ()
        from accord.protocol.plugins import entry_points, load

        found: list[LazyCommand] = []
        for app, value in sorted(entry_points(self.plugin_group).items()):
            try:
                table = load(value)
            except (ImportError, AttributeError) as error:
                # One broken application must not take the framework's commands down with it
                # (`accord up`, `accord db` are how its owner repairs it): said, and skipped.
                print(f"accord: {app}'s commands not loaded ({value}: {error})", file=sys.stderr)
                continue
            if isinstance(table, tuple):
                found += [entry for entry in table if isinstance(entry, LazyCommand)]
        return tuple(found)

    def _read_plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True
        for entry in self.plugins():
            self.commands.setdefault(entry.name, _Listed(entry))

    def list_commands(self, ctx: _click.Context) -> list[str]:
        self._read_plugins()
        return super().list_commands(ctx)

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None:
            self._read_plugins()  # not the framework's: an application's, if one has it
            command = self.commands.get(cmd_name)
        if isinstance(command, _Listed) and not self._listing:
            self._load(command.entry)
            command = self.commands.get(cmd_name)
        return command

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self._listing = True  # the listing reads the placeholders' summaries; nothing imported
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def _load(self, entry: LazyCommand) -> None:
        holder = typer.Typer(rich_markup_mode=self.rich_markup_mode)
        importlib.import_module(entry.module).register(holder)
        # A module may register several commands (`accord tools` and its subcommands, an
        # application's pair): all become real at once.
        loaded = typer.main.get_group(holder).commands
        for name, command in loaded.items():
            listed = self.commands.get(name)
            # Only the placeholders this module stands for: a name another module is listed
            # under (a framework command an application also registers) stays that module's.
            if isinstance(listed, _Listed) and listed.entry.module == entry.module:
                self.commands[name] = command
