"""The shape every Accord tool server shares: a ToolServer behind `accord serve NAME`."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.mcp.server import CallContext, ToolServer, build_http_app
from accord.protocol.mcp.server import run_stdio as serve_stdio
from accord.protocol.service import AsgiApp, ServiceSpec
from accord.protocol.settings import ServeOptions, database_url
from accord.protocol.storage.schema import Schema, StoreRef


def package_version() -> str:
    try:
        return version("accord-tools")
    except PackageNotFoundError:  # running from a source tree without metadata
        return "0.0.0"


def verified_customer(args: dict[str, Any], ctx: CallContext) -> str:
    """The customer the server verified for this call (the argument, for a stdio parent)."""
    customer = ctx.customer_id
    if customer is None:  # a contract without access.customer_field: a bug in our contracts
        raise AccordError(ErrorCode.INTERNAL, f"{ctx.tool}: no verified customer")
    if customer != args.get("customer_id"):  # refused by the server already; never reached
        raise AccordError(ErrorCode.INTERNAL, f"{ctx.tool}: customer mismatch")
    return customer


def database_for(service: str, options: ServeOptions) -> str:
    """``--database-url`` / ``ACCORD_DATABASE_URL`` (PostgreSQL), else the service's SQLite file."""
    return options.database_url or database_url(service)


def make_service(
    name: str,
    description: str,
    make_server: Callable[[ServeOptions], ToolServer],
    schema: Schema,
    port: int,
) -> ServiceSpec:
    def build_app(options: ServeOptions) -> AsgiApp:
        return build_http_app(make_server(options), host=options.host, service_name=name)

    def run_stdio(options: ServeOptions) -> None:
        serve_stdio(make_server(options))

    return ServiceSpec(
        name=name,
        protocol="mcp",
        description=description,
        build_app=build_app,
        run_stdio=run_stdio,
        port=port,
        stores=lambda options: [StoreRef(schema, database_for(name, options))],
    )
