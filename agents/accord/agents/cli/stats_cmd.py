"""`accord stats [--url URL] [--token T] [--json]`: a running orchestrator's model metrics.

Reads ``GET /stats`` (authenticated; role approver or service) and prints the totals and one row
per (route, status): samples, success rate (budget-exhausted runs are in the denominator),
nearest-rank P95 latency, units and calls, and the window the samples cover. Without
``--token`` it signs a development service token with this machine's secret (right for
`accord up`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from accord.agents.cli.refund_cmd import EXIT_CALL_FAILED, orchestrator_url
from accord.agents.refund.stats_route import STATS_PATH
from accord.cli.credentials import given_token, print_error
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.client.routes import get_json
from accord.protocol.auth import service_token

CLI_SERVICE = "cli"


async def fetch_stats(url: str, token: str) -> dict[str, Any]:
    body = await get_json(f"{url}{STATS_PATH}", token)
    if not isinstance(body, dict) or not isinstance(body.get("models"), dict):
        raise AccordError(ErrorCode.CONTRACT_VIOLATION, f"{url}{STATS_PATH} sent no metrics")
    return body


def _rate(value: Any) -> str:
    return f"{value:.1%}" if isinstance(value, int | float) else "-"


def _ms(value: Any) -> str:
    return f"{value:.1f} ms" if isinstance(value, int | float) else "-"


def _when(value: Any) -> str:
    """An ISO timestamp of the window, to the second ("-" for an empty window)."""
    if not isinstance(value, str) or not value:
        return "-"
    return value[:19].replace("T", " ")


def _row(label: list[str], agg: dict[str, Any]) -> list[str]:
    window = agg.get("window") or {}
    errors = ", ".join(f"{k} {v}" for k, v in (agg.get("errors") or {}).items())
    return [
        *label,
        str(agg.get("samples", 0)),
        _rate(agg.get("success_rate")),
        _ms(agg.get("p95_latency_ms")),
        str(agg.get("total_units", 0)),
        str(agg.get("total_calls", 0)),
        errors or "-",
        f"{_when(window.get('first'))} .. {_when(window.get('last'))}",
    ]


COLUMNS = ("samples", "success", "P95", "units", "calls", "errors", "window (UTC)")


def stats_tables(body: dict[str, Any]) -> list[Table]:
    models = body["models"]
    total = Table("", *COLUMNS, title=f"model runs of {body.get('service', 'the orchestrator')}")
    total.add_row(*_row(["all"], models))
    by_route = Table("route", "status", *COLUMNS, title="by route and status")
    for group in models.get("by_route_status") or []:
        by_route.add_row(*_row([str(group.get("route")), str(group.get("status"))], group))
    return [total, by_route]


def register(app: typer.Typer) -> None:
    @app.command()
    def stats(
        url: str = typer.Option(None, "--url", help="Orchestrator URL (default: port 8700)"),
        token: str = typer.Option(
            None, "--token", help="Bearer token, approver or service (default: ACCORD_TOKEN)"
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the JSON snapshot"),
    ) -> None:
        """Model metrics of a running orchestrator: success rate, P95, units and calls."""
        base = orchestrator_url(url)
        bearer = given_token(token) or service_token(CLI_SERVICE, ttl_s=300)
        try:
            body = asyncio.run(fetch_stats(base, bearer))
        except AccordError as error:
            print_error(error)
            raise typer.Exit(EXIT_CALL_FAILED) from None
        if as_json:
            typer.echo(json.dumps(body, ensure_ascii=False))
            return
        console = Console()
        for table in stats_tables(body):
            console.print(table)
        console.print(f"[dim]{body['models'].get('definition', '')}[/]")
