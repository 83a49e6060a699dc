"""`accord console`: serve the web console for approvers and customers (docs/console.md).

It listens on the host and port of ``ACCORD_CONSOLE_URL`` (default http://127.0.0.1:8720), the
one origin the orchestrator lets browsers call it from, and points its pages at
``ACCORD_ORCHESTRATOR_URL``. ``--host`` binds another interface (a container's 0.0.0.0) while
the URL stays the one browsers use.
"""

from __future__ import annotations

import typer

from accord.agents.console.app import ConsoleConfig, build_console_app
from accord.cli.mesh import CONSOLE, console_address
from accord.protocol.settings import current, env_name, service_url
from accord.protocol.telemetry import configure_logging

SERVICE_NAME = CONSOLE


def register(app: typer.Typer) -> None:
    @app.command()
    def console(
        host: str = typer.Option(
            None,
            "--host",
            help=f"Interface to bind (default: the host of {env_name('console_url')})",
        ),
    ) -> None:
        """Serve the web console: approvers' queue and customers' chat, in the browser."""
        import uvicorn

        settings = current()  # every ACCORD_* value is checked before anything starts
        orchestrator = service_url("orchestrator")
        configure_logging(SERVICE_NAME)
        url_host, port = console_address()
        typer.echo(
            f"console: {settings.console_url}  (orchestrator {orchestrator})",
            err=True,
        )
        uvicorn.run(
            build_console_app(ConsoleConfig(orchestrator_url=orchestrator)),
            host=host or url_host,
            port=port,
            log_level=settings.log_level.lower(),
            log_config=None,
            lifespan="off",
        )
