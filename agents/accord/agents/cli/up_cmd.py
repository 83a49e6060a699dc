"""`accord up`: the whole mesh on 127.0.0.1 with SQLite in one data directory.

Starts the five services as child processes on their default ports (or the ports of
``ACCORD_<NAME>_URL``, the same settings clients use to find them), then the web console
(``ACCORD_CONSOLE_URL``; ``--no-console`` leaves it out), waits for their health endpoints (with
a deadline), prints where they are (the console's URL to open in a browser), and stops them all
cleanly on Ctrl-C or SIGTERM (or when one of them dies). Logs go to DATA_DIR/logs/NAME.log.
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

from accord.agents.cli.console_cmd import console_address
from accord.agents.cli.mesh import CONSOLE, ORDER, Mesh, MeshError, start_console, start_mesh
from accord.protocol.settings import DEFAULT_PORTS, current, service_url

EXIT_START_FAILED = 1
ROLES = {
    "orchestrator": "A2A  refund assistant (GET /approvals for approvers)",
    "policy": "A2A  policy-check",
    "risk": "A2A  risk-check",
    "commerce": "MCP  orders.*, customers.history  (/mcp)",
    "payments": "MCP  refunds.issue, refunds.get  (/mcp)",
}


def default_data_dir(given: Path | None) -> Path:
    return given if given is not None else current().data_dir.absolute()


def configured_ports() -> dict[str, int]:
    return {name: urlsplit(service_url(name)).port or DEFAULT_PORTS[name] for name in ORDER}


def endpoints_table(mesh: Mesh) -> Table:
    table = Table("service", "url", "what")
    for name in ORDER:
        table.add_row(name, mesh.url(name), ROLES[name])
    return table


def register(app: typer.Typer) -> None:
    @app.command()
    def up(
        data_dir: Path = typer.Option(
            None, "--data-dir", help="SQLite files, secrets and logs (default: ./.accord)"
        ),
        deadline: float = typer.Option(90.0, "--deadline", help="Seconds to wait for health"),
        no_console: bool = typer.Option(
            False, "--no-console", help="Do not start the web console (`accord console`)"
        ),
    ) -> None:
        """Start all five services and keep them running until Ctrl-C."""
        console = Console()
        where = default_data_dir(data_dir)

        def on_signal(_signum: int, _frame: FrameType | None) -> None:
            raise KeyboardInterrupt  # Ctrl-C and SIGTERM alike: stop everything cleanly

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            console.print(f"starting the mesh in {where} ...")
            try:
                mesh = start_mesh(where, ports=configured_ports(), deadline_s=deadline)
                if not no_console:
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
            died = _serve(console, mesh)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if died:
            raise typer.Exit(EXIT_START_FAILED)


def _serve(console: Console, mesh: Mesh) -> bool:
    """Run until a signal (False) or until a service dies (True); then stop them all."""
    died = False
    try:
        console.print(endpoints_table(mesh))
        if CONSOLE in mesh.processes:
            console.print(
                f"web console: {current().console_url}  (sign in with a token: accord token "
                "--user C-03, or --user approver-1 --role approver)",
                highlight=False,
            )
        console.print(f"data: {mesh.data_dir}   logs: {mesh.data_dir / 'logs'}")
        console.print("try: accord refund '鞋码不合适，想退款，订单 O-1001'   (Ctrl-C stops)")
        while not died:
            dead = [n for n, p in mesh.processes.items() if p.poll() is not None]
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
