"""`accord card URL`: fetch an agent's A2A card and say whether it speaks the Accord contract."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import httpx
import typer
from rich.console import Console
from rich.table import Table

from accord.cli.credentials import print_error
from accord.contracts.errors import AccordError
from accord.contracts.keys import CONTRACT_EXTENSION_URI, DELEGATION_EXTENSION_URI

if TYPE_CHECKING:
    from accord.protocol.a2a.client.card import ResolvedCard


async def _fetch(url: str) -> ResolvedCard:
    # Imported here: the A2A package is heavy to import and other commands do not need it.
    from accord.protocol.a2a.client.card import resolve_card

    async with httpx.AsyncClient(timeout=10.0) as http:
        return await resolve_card(http, url)


def _yes(flag: bool) -> str:
    return "[green]yes[/]" if flag else "[yellow]no[/]"


def show_card(resolved: ResolvedCard, console: Console) -> None:
    card = resolved.card
    console.print(f"[bold]{card.name}[/] {card.version}  ({resolved.url})")
    if card.description:
        console.print(card.description)
    console.print(f"Accord contract extension:   {_yes(resolved.accord_contract)}")
    console.print(f"Accord delegation extension: {_yes(resolved.accord_delegation)}")
    console.print(f"streaming: {_yes(resolved.streaming)}")
    interfaces = Table(title="Interfaces")
    for col in ("binding", "version", "url", "usable"):
        interfaces.add_column(col)
    usable = resolved.interfaces()
    for i in card.supported_interfaces:
        interfaces.add_row(
            i.protocol_binding, i.protocol_version or "?", i.url, "yes" if i in usable else "no"
        )
    console.print(interfaces)
    skills = Table(title="Skills")
    for col in ("id", "name", "description"):
        skills.add_column(col)
    for s in card.skills:
        skills.add_row(s.id, s.name, s.description)
    console.print(skills)
    if card.security_schemes:
        console.print("security: " + ", ".join(sorted(card.security_schemes)))
    accord = (CONTRACT_EXTENSION_URI, DELEGATION_EXTENSION_URI)
    others = [u for u in resolved.extensions if u not in accord]
    if others:
        console.print("other extensions: " + ", ".join(others))


def register(app: typer.Typer) -> None:
    @app.command()
    def card(
        url: str = typer.Argument(help="Agent base URL (or the card's own URL)"),
        as_json: bool = typer.Option(False, "--json", help="Print the card JSON as served"),
    ) -> None:
        """Show an A2A agent's card and whether it declares the Accord extensions."""
        try:
            resolved = asyncio.run(_fetch(url))
        except AccordError as error:
            print_error(error)
            raise typer.Exit(1) from None
        if as_json:
            typer.echo(json.dumps(resolved.raw, indent=2, ensure_ascii=False))
            return
        show_card(resolved, Console())
