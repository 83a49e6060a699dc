"""`accord cluster`: every service as several replicas on one PostgreSQL, behind HAProxy.

The production topology on one machine (docs/replicas.md "A cluster on one machine"): an
HAProxy frontend per service on the service's port (``ACCORD_<NAME>_URL``'s, else the app
file's, else its default: the ports `accord up` uses), ``--replicas`` processes of each service
behind it on free ports, all on ``ACCORD_DATABASE_URL``. Replicas that exit are started again.
Runs until Ctrl-C or SIGTERM; the balancer's configuration, the replicas' logs and
``cluster.json`` (ports and pids) are in DATA_DIR/cluster.
"""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path
from types import FrameType

import typer
from rich.console import Console
from rich.table import Table

from accord.cli.cluster import BALANCER, Cluster, ClusterError, plan, wait_ready
from accord.cli.up_cmd import busy_ports, chosen_app, configured_ports, default_data_dir
from accord.protocol.auth.tokens import configured_secret
from accord.protocol.settings import current, env_name

EXIT_START_FAILED = 1
WATCH_INTERVAL_S = 0.2


def _replica_ports(given: str) -> list[int]:
    try:
        return [int(p) for p in given.split(",") if p.strip()]
    except ValueError:
        raise typer.BadParameter(
            "comma-separated port numbers", param_hint="--replica-ports"
        ) from None


def register(app: typer.Typer) -> None:
    @app.command()
    def cluster(
        replicas: int = typer.Option(2, "--replicas", min=1, help="Processes per service"),
        database_url: str = typer.Option(
            "",
            "--database-url",
            help="The PostgreSQL database all replicas share (default: ACCORD_DATABASE_URL)",
        ),
        data_dir: Path = typer.Option(
            None,
            "--data-dir",
            help="Secret and keys shared by the replicas (and the clients); the cluster's "
            "files in its cluster/ folder (default: ACCORD_DATA_DIR, else the project's .accord)",
        ),
        deadline: float = typer.Option(180.0, "--deadline", help="Seconds to wait for health"),
        haproxy: str = typer.Option(
            "", "--haproxy", help="The haproxy binary (default: haproxy on PATH)"
        ),
        replica_ports: str = typer.Option(
            "",
            "--replica-ports",
            help="Comma-separated ports of the replicas, service by service (default: free ones)",
        ),
        app_file: Path = typer.Option(
            None,
            "--app",
            help="The application's file (default: accord.yaml here or in a folder above, else "
            "the installed one)",
        ),
    ) -> None:
        """Run every service as --replicas processes on one PostgreSQL, behind HAProxy."""
        console = Console()
        err = Console(stderr=True, soft_wrap=True, highlight=False)
        url = database_url or current().database_url
        if not url or not url.startswith("postgres"):
            raise typer.BadParameter(
                "replicas share one PostgreSQL database: set ACCORD_DATABASE_URL "
                "(postgresql://...) or give --database-url",
                param_hint="--database-url",
            )
        binary = haproxy or shutil.which(BALANCER)
        if not binary:
            err.print("[red]haproxy not found[/]: apt-get install -y haproxy (or --haproxy PATH)")
            raise typer.Exit(EXIT_START_FAILED)
        where = default_data_dir(data_dir).expanduser().resolve()
        application = chosen_app(app_file)
        ports = configured_ports(application)
        busy = busy_ports(ports, None)
        if busy:
            err.print(f"[red]{application.name} not started[/]: ports already in use")
            for line in busy:
                err.print(line, markup=False)
            raise typer.Exit(EXIT_START_FAILED)
        import os

        os.environ[env_name("data_dir")] = str(where)
        settings = current()
        # What every replica shares (docs/replicas.md "What to configure"); each has its own
        # data directory. The shared secret and keys are the data directory's, so clients
        # given ACCORD_DATA_DIR mint tokens every replica accepts.
        shared = {
            env_name("database_url"): url,
            env_name("keys_dir"): str(settings.keys_dir or where / "keys"),
            env_name("revoked_file"): str(settings.revoked_file or where / "revoked"),
        }
        secret = configured_secret()
        if secret is not None:
            shared[env_name("jwt_secret")] = secret
        env = {**os.environ, **application.env(ports), **shared}
        try:
            members = plan(
                application,
                where / "cluster",
                ports,
                replicas=replicas,
                env=env,
                given_ports=_replica_ports(replica_ports),
            )
        except ClusterError as error:
            raise typer.BadParameter(str(error), param_hint="--replica-ports") from None
        run(console, err, members, binary, deadline)


def run(console: Console, err: Console, members: Cluster, haproxy: str, deadline: float) -> None:
    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # Ctrl-C and SIGTERM alike: stop everything cleanly

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        console.print(f"starting {members.app.name}: {len(members.replicas)} replicas ...")
        try:
            for replica in members.replicas:
                members.start_replica(replica)
            members.start_balancer(haproxy)
            wait_ready(members, deadline)
        except ClusterError as error:
            members.stop()
            err.print(f"[red]the cluster did not start[/]: {error}", markup=True)
            raise typer.Exit(EXIT_START_FAILED) from None
        table = Table("service", "balancer", "replicas")
        for frontend in members.frontends():
            table.add_row(
                frontend.name,
                members.url(frontend.name),
                ", ".join(str(p) for p in frontend.replica_ports),
            )
        console.print(table)
        console.print(f"cluster: {members.root}   state: {members.state_path}")
        console.print("ready; Ctrl-C stops", highlight=False)
        while True:
            if members.balancer is not None and members.balancer.poll() is not None:
                err.print(f"[red]{BALANCER} exited with {members.balancer.returncode}[/]")
                members.start_balancer(haproxy)  # the single point comes back by itself
            for replica in members.watch():
                console.print(f"{replica.name} exited; started again", highlight=False)
            time.sleep(WATCH_INTERVAL_S)  # a supervisor's poll; a signal ends the loop
    except KeyboardInterrupt:
        # A second signal (Ctrl-C reaches the whole process group, a wrapper may send SIGTERM
        # too) must not cut the stop short: the replicas and the balancer would be left running.
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        console.print("stopping ...")
        members.stop()
        console.print("stopped")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
