"""`accord webhook`: receive push notifications and print them, for trying push out.

    accord webhook [--port 8790] [--secret TOKEN]

Listens on 127.0.0.1; give an agent ``http://127.0.0.1:PORT/`` as a push config's URL (the
agent must run with ``ACCORD_DEV=1`` to send to loopback) and TOKEN as its token. Every request
whose signature checks out is printed as one JSON line (id, task, state, body); others get 401.
Without ``--secret`` a random token is made up and printed.
"""

from __future__ import annotations

import json
import secrets
from typing import Final

import typer
import uvicorn

from accord.protocol.push.receiver import Notification, build_receiver_app

DEFAULT_PORT: Final = 8790


def webhook(
    port: int = typer.Option(DEFAULT_PORT, "--port", min=0, max=65535, help="Port on 127.0.0.1"),
    secret: str = typer.Option("", "--secret", help="The push config's token (shared secret)"),
) -> None:
    """Receive push notifications on 127.0.0.1 and print each verified one."""
    token = secret or secrets.token_urlsafe(24)
    if not secret:
        typer.echo(f"token (give it as the push config's token): {token}", err=True)
    typer.echo(f"listening on http://127.0.0.1:{port}/", err=True)

    def show(note: Notification) -> None:
        line = {"id": note.id, "task": note.task_id, "state": note.state, "body": note.body}
        typer.echo(json.dumps(line, separators=(",", ":")))

    app = build_receiver_app(token, show)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("webhook")(webhook)
