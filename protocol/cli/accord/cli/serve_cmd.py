"""`accord serve NAME`: run one service under uvicorn (or over stdio for MCP servers)."""

from __future__ import annotations

import logging
from pathlib import Path

import typer

from accord.contracts.errors import AccordError
from accord.protocol.app_file import load_app
from accord.protocol.auth.anonymous import (
    ANONYMOUS,
    AUTH_MODES,
    AUTH_NONE,
    auth_none_refusal,
)
from accord.protocol.error_boundary import ErrorBoundary
from accord.protocol.service import (
    StartRefusedError,
    check_startup,
    find_service,
    service_names,
)
from accord.protocol.settings import DEFAULT_HOST, ServeOptions, current, service_url_env
from accord.protocol.telemetry import configure_logging, setup_telemetry
from accord.protocol.telemetry.asgi import ServerTelemetry

logger = logging.getLogger(__name__)


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        name: str = typer.Argument(
            help="Service: an installed one (entry point group accord.services) or one of --app's"
        ),
        host: str = typer.Option(DEFAULT_HOST, help="Interface to bind"),
        port: int = typer.Option(0, help="Port (0: the service's default)"),
        database_url: str = typer.Option(
            "",
            "--database-url",
            help="PostgreSQL URL; default: ACCORD_DATABASE_URL, else a SQLite file in the data "
            "directory",
        ),
        stdio: bool = typer.Option(False, help="Serve MCP over stdio instead of HTTP"),
        auth: str = typer.Option(
            "token",
            "--auth",
            help="token: every request carries a credential; none: development only, on "
            "loopback, an A2A agent admits callers without one (docs/security-a2a.md)",
        ),
        app_file: Path = typer.Option(
            None, "--app", help="An application's file (docs/apps.md): NAME is one of its services"
        ),
        public_url: str = typer.Option(
            "",
            "--public-url",
            help="The URL clients reach this service at, when it is not the bound one (a load "
            "balancer's): what its Agent Card names",
        ),
    ) -> None:
        """Start one service."""
        import os

        import uvicorn

        app_port = 0
        if app_file is None:
            spec = find_service(name)
            known = ", ".join(service_names()) or "none installed"
        else:
            try:
                app = load_app(app_file)
                spec = app.service(name)
            except AccordError as error:
                raise typer.BadParameter(error.message, param_hint="--app") from None
            known = ", ".join(app.service_names)
            if spec is not None:
                app_port = app.port(name, spec)
                # The app's settings and its services' URLs, under what the caller set.
                ports = {n: app.port(n) for n in app.service_names if app.port(n)}
                for key, value in app.env(ports).items():
                    os.environ.setdefault(key, value)
                os.environ.setdefault(service_url_env(name), f"http://{host}:{app_port}")
        current()  # every ACCORD_* value is checked before anything starts (main() reports)
        if spec is None:
            raise typer.BadParameter(f"unknown service {name!r} (known: {known})")
        # One place per process: service.name, exporters from the OTEL_* environment, log format.
        configure_logging(name)
        check_startup(spec)  # production mode's refusals (exit 2, one line); development's notice
        if auth not in AUTH_MODES:
            raise typer.BadParameter(f"one of {', '.join(AUTH_MODES)}", param_hint="--auth")
        if auth == AUTH_NONE:
            why = auth_none_refusal(current(), host, spec.protocol)
            if why is not None:
                raise StartRefusedError(f"accord serve {name}: {why}")
            logger.warning(
                "authentication is OFF (--auth none): callers without a credential are served "
                "as %s; development only, on %s",
                ANONYMOUS.owner,
                host,
            )
        if not (port or app_port or spec.default_port):
            raise typer.BadParameter(f"{name} has no default port", param_hint="--port")
        telemetry = setup_telemetry(name)
        options = ServeOptions(
            host=host,
            port=port or app_port or spec.default_port,
            database_url=database_url or None,
            auth_none=auth == AUTH_NONE,
            public_url=public_url.rstrip("/") or None,
        )
        try:
            if stdio:
                if spec.run_stdio is None:
                    raise typer.BadParameter(f"{name} does not serve over stdio")
                spec.run_stdio(options)
                return
            uvicorn.run(
                ErrorBoundary(ServerTelemetry(spec.build_app(options), protocol=spec.protocol)),
                host=options.host,
                port=options.port,
                # uvicorn's loggers propagate to our handler (one format, one redaction) at
                # ACCORD_LOG_LEVEL, like everyone else's.
                log_level=current().log_level.lower(),
                log_config=None,
                lifespan="on",
                # SIGTERM: uvicorn closes the listening socket (new work goes to another
                # replica; a client retries the refused connection), lets the requests in flight
                # finish for this long, then runs the lifespan shutdown.
                timeout_graceful_shutdown=int(current().shutdown_grace_s),
            )
        finally:
            telemetry.shutdown()
