"""`accord token`: print a development token, or revoke one.

    accord token --user C-01 --role customer [--app accord] [--ttl 3600]
    accord token --user svc:kit --role service --scope orders.lookup   # a grant (tool name)
    accord token --revoke JTI

Tokens are HS256 JWTs signed with the development secret (data_dir()/jwt-secret, or
ACCORD_JWT_SECRET), the one every local service verifies with.
"""

from __future__ import annotations

import jwt
import typer

from accord.protocol.auth import DEFAULT_APP, mint_token
from accord.protocol.auth_revocation import revoke


def register(app: typer.Typer) -> None:
    @app.command()
    def token(
        user: str = typer.Option("", "--user", help="Subject, e.g. C-01 or approver-1"),
        role: list[str] = typer.Option(
            [], "--role", help="Role (repeatable): customer, approver, service"
        ),
        tenant_app: str = typer.Option(DEFAULT_APP, "--app", help="Tenant app"),
        ttl: int = typer.Option(3600, "--ttl", min=1, help="Lifetime in seconds"),
        revoke_id: str = typer.Option(
            "", "--revoke", help="Add this token id (jti) or API key id to the deny list"
        ),
        show_id: bool = typer.Option(False, "--show-id", help="Print the token id (jti) too"),
        scope: list[str] = typer.Option(
            [], "--scope", help="Grant (repeatable): a tool a service may call, e.g. refunds.get"
        ),
    ) -> None:
        """Print a development bearer token (or revoke one with --revoke JTI)."""
        if revoke_id:
            path = revoke(revoke_id)
            typer.echo(f"revoked {revoke_id} (deny list: {path})")
            return
        if not user:
            raise typer.BadParameter("--user is required", param_hint="--user")
        value = mint_token(user, role or ["customer"], app=tenant_app, ttl_s=ttl, scopes=scope)
        if show_id:
            jti = jwt.decode(value, options={"verify_signature": False})["jti"]
            typer.echo(f"# jti {jti}", err=True)
        typer.echo(value)
