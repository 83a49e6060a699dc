"""`accord new NAME`: a new application in its own folder (one A2A agent, one MCP tool server,
their contracts, an app file, probes for the kit, a README), ready for `accord up` and `accord
contract-test` there. The files come from ``app_template/`` (docs/getting-started.md walks them).

It imports the framework only (accord.contracts, accord.protocol), never an application:
tests/apps/test_new_app.py runs exactly the README's commands against it from a clean folder.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template
from typing import Final

import typer

NAME: Final = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
MAX_NAME: Final = 30
# Names the trust table gives Accord's own tools on a development machine; an installed
# service's name is taken too (`taken_names`).
RESERVED: Final = frozenset({"kit", "cli"})
SUFFIX: Final = ".tmpl"


def taken_names() -> frozenset[str]:
    """Reserved names and every installed service's (entry points ``accord.services``)."""
    from accord.protocol.plugins import entry_points

    return RESERVED | frozenset(entry_points("accord.services"))


def checked_name(name: str) -> str:
    if len(name) > MAX_NAME or NAME.fullmatch(name) is None:
        raise typer.BadParameter(
            f"{name!r}: lower-case letters and digits, words joined by '-', at most {MAX_NAME}",
            param_hint="NAME",
        )
    if name in taken_names():
        raise typer.BadParameter(f"{name!r} is a name Accord already uses", param_hint="NAME")
    return name


def render(name: str, agent_port: int, tool_port: int) -> dict[Path, str]:
    """Every file of the new application: path relative to its folder -> text."""
    pkg = name.replace("-", "_")
    values = {
        "name": name,
        "pkg": pkg,
        "env": pkg.upper(),
        "agent_port": str(agent_port),
        "tool_port": str(tool_port),
    }
    out: dict[Path, str] = {}
    root = resources.files("accord.cli") / "app_template"
    for relative, source in _walk(root, Path()):
        target = Path(
            *(
                part.replace("__pkg__", pkg).replace("__name__", name).replace("dot-", ".")
                for part in relative.with_name(relative.name.removesuffix(SUFFIX)).parts
            )
        )
        out[target] = Template(source.read_text(encoding="utf-8")).substitute(values)
    return out


def _walk(folder: Traversable, at: Path) -> list[tuple[Path, Traversable]]:
    found: list[tuple[Path, Traversable]] = []
    for entry in folder.iterdir():
        if entry.is_dir():
            found += _walk(entry, at / entry.name)
        elif entry.name.endswith(SUFFIX):
            found.append((at / entry.name, entry))
    return found


def register(app: typer.Typer) -> None:
    @app.command("new")
    def new(
        name: str = typer.Argument(help="The application's name, e.g. help-desk"),
        into: Path = typer.Option(
            Path("."), "--dir", help="Where to make the folder NAME (default: here)"
        ),
        agent_port: int = typer.Option(8800, "--agent-port", min=1, max=65535),
        tool_port: int = typer.Option(8810, "--tool-port", min=1, max=65535),
    ) -> None:
        """Make a new application: an agent, a tool server, their contracts, in folder NAME."""
        name = checked_name(name)
        if agent_port == tool_port:
            raise typer.BadParameter("the agent and the tool server need two ports")
        folder = (into / name).resolve()
        if folder.exists() and any(folder.iterdir()):
            raise typer.BadParameter(f"{folder} exists and is not empty", param_hint="NAME")
        files = render(name, agent_port, tool_port)
        for relative, text in sorted(files.items()):
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        typer.echo(f"made {name} in {folder} ({len(files)} files). Next:")
        typer.echo(f"  cd {folder}")
        typer.echo("  accord up                # the tool server, then the agent")
        typer.echo("  accord contract-test     # in another terminal: the kit against both")
