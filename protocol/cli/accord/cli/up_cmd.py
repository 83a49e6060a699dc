"""`accord up`: an application's whole mesh on 127.0.0.1 with SQLite in one data directory.

The application is the app file given (``--app``), else the project's accord.yaml (here or in
a folder above, as the data directory is found), else the application built into `accord`
(entry point group ``accord.apps``; docs/apps.md). Starts its services as child processes on
their ports (those of ``ACCORD_<NAME>_URL``, the same settings clients use to find them, else
the app file's, else the service's default), then, for an app that has one, the web console
(``ACCORD_CONSOLE_URL``; ``--no-console`` leaves it out), waits for their health endpoints
(with a deadline), prints where they are, and stops them all cleanly on Ctrl-C or SIGTERM (or
when one of them dies). Logs go to DATA_DIR/logs/NAME.log.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.table import Table

from accord.cli.mesh import (
    CONSOLE,
    Mesh,
    MeshError,
    console_address,
    holder,
    log_tail,
    port_taken,
    start_console,
    start_mesh,
)
from accord.cli.output import accord_command, hint
from accord.contracts.errors import AccordError
from accord.protocol.app_file import App, find_app, project_app_file
from accord.protocol.plugins import installed_app
from accord.protocol.settings import (
    APP_FILE,
    DEFAULT_HOST,
    current,
    data_dir_path,
    env_name,
    given_service_url,
    service_url_env,
)

EXIT_START_FAILED = 1


def default_data_dir(given: Path | None) -> Path:
    return given if given is not None else data_dir_path()


def chosen_app(given: Path | None) -> App:
    """``--app``, else the project's accord.yaml (here or in a folder above, as the data
    directory is found), else the installed application; a broken file is a usage error, and
    so is no application at all."""
    built_in = installed_app()
    if given is None and built_in is None and project_app_file() is None:
        raise typer.BadParameter(
            f"no {APP_FILE} here or in a folder above, and no application installed",
            param_hint="--app",
        )
    default = built_in.path if built_in is not None else Path.cwd() / APP_FILE
    try:
        return find_app(given, default)
    except AccordError as error:
        raise typer.BadParameter(error.message, param_hint="--app") from None


def configured_ports(app: App) -> dict[str, int]:
    """Each service's port: ACCORD_<NAME>_URL's, else the app file's, else its default."""
    ports: dict[str, int] = {}
    for name in app.service_names:
        given = given_service_url(name)
        port = urlsplit(given).port if given is not None else None
        port = port or app.port(name) or app.port(name, app.service(name))
        if not port:
            raise typer.BadParameter(f"service {name!r} has no port (give it one in {app.path})")
        ports[name] = port
    return ports


def busy_ports(ports: dict[str, int], console_at: tuple[str, int] | None) -> list[str]:
    """One line per port a service (or the console) could not listen on, saying what holds it
    and what to do; checked before anything starts, since a second mesh's services would
    otherwise die on "address already in use" only after the first mesh answered their health
    checks in their stead (issue #36)."""
    wanted = [(name, DEFAULT_HOST, port, service_url_env(name)) for name, port in ports.items()]
    if console_at is not None:
        wanted.append((CONSOLE, *console_at, env_name("console_url")))
    lines: list[str] = []
    for name, host, port, variable in wanted:
        if not port_taken(port, host):
            continue
        held = holder(port, host)
        by = (
            f"Accord's {held} (another `accord up`?). Stop that mesh (Ctrl-C in its terminal)"
            if held
            else "another program. Stop it"
        )
        other = " (or --no-console)" if name == CONSOLE else ""
        lines.append(
            f"{name}: port {port} is already in use by {by}, or give {name} another port: "
            f"{variable}=http://{host}:PORT{other}"
        )
    return lines


def endpoints_table(mesh: Mesh) -> Table:
    table = Table("service", "url", "what")
    for service in mesh.app.spec.services:
        table.add_row(service.name, mesh.url(service.name), service.what)
    return table


def register(app: typer.Typer) -> None:
    @app.command()
    def up(
        data_dir: Path = typer.Option(
            None,
            "--data-dir",
            help="SQLite files, secrets and logs (default: ACCORD_DATA_DIR, else the "
            "project's .accord)",
        ),
        deadline: float = typer.Option(90.0, "--deadline", help="Seconds to wait for health"),
        no_console: bool = typer.Option(
            False, "--no-console", help="Do not start the web console (`accord console`)"
        ),
        app_file: Path = typer.Option(
            None,
            "--app",
            help="The application's file (default: accord.yaml here or in a folder above, else "
            "the installed one)",
        ),
    ) -> None:
        """Start an application's services and keep them running until Ctrl-C."""
        console = Console()
        where = default_data_dir(data_dir)
        app = chosen_app(app_file)
        ports = configured_ports(app)
        with_console = app.spec.console and not no_console
        busy = busy_ports(ports, console_address() if with_console else None)
        if busy:
            err = Console(stderr=True, soft_wrap=True, highlight=False)
            err.print(f"[red]{app.name} not started[/]: ports already in use")
            for line in busy:
                err.print(line, markup=False)
            raise typer.Exit(EXIT_START_FAILED)

        def on_signal(_signum: int, _frame: FrameType | None) -> None:
            raise KeyboardInterrupt  # Ctrl-C and SIGTERM alike: stop everything cleanly

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            console.print(f"starting {app.name} in {where} ...")
            try:
                mesh = start_mesh(where, app=app, ports=ports, deadline_s=deadline)
                if with_console:
                    try:
                        start_console(mesh, console_address()[1], deadline_s=deadline)
                    except BaseException:
                        mesh.stop()
                        raise
            except KeyboardInterrupt:  # start_mesh stopped what it had started
                console.print("stopped")
                return
            except MeshError as error:
                Console(stderr=True).print(f"[red]the mesh did not start[/]: {error}")
                raise typer.Exit(EXIT_START_FAILED) from None
            died = serve_until_stopped(console, mesh)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if died:
            raise typer.Exit(EXIT_START_FAILED)


def serve_until_stopped(console: Console, mesh: Mesh) -> bool:
    """Run until a signal (False) or until a service dies (True); then stop them all."""
    died = False
    accord = accord_command()
    try:
        console.print(endpoints_table(mesh))
        built_in = installed_app()
        ours = built_in if built_in is not None and built_in.path == mesh.app.path else None
        if CONSOLE in mesh.processes:
            how = ours.console_hint.format(accord=accord) if ours and ours.console_hint else ""
            console.print(
                f"web console: {current().console_url}" + (f"  ({how})" if how else ""),
                highlight=False,
                markup=False,
            )
        console.print(f"data: {mesh.data_dir}   logs: {mesh.data_dir / 'logs'}")
        if ours is not None and ours.hint:
            hint(console, ours.hint.format(accord=accord))
        else:
            console.print("Ctrl-C stops")
        while not died:
            dead = [n for n, p in mesh.processes.items() if p.poll() is not None]
            for name in dead:  # its log says why; "stopped" alone does not
                code = mesh.processes[name].returncode
                console.print(f"[red]{name} exited with {code}[/]; the end of its log:")
                console.print(log_tail(mesh, name), markup=False, highlight=False)
            if dead:
                console.print(f"[red]{', '.join(dead)} stopped; stopping the mesh[/]")
                died = True
            time.sleep(0.2)  # waiting for a signal; nothing to poll faster for
    except KeyboardInterrupt:
        pass
    finally:
        console.print("stopping ...")
        mesh.stop()
        console.print("stopped")
    return died
