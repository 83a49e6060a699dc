"""`accord token`: print a development token; `accord token revoke`: refuse credentials.

    accord token --user alice --role customer [--app accord] [--ttl 3600] [--show-id]
    accord keys token my-agent --scope notes.search   a service's token (its own key)
    accord token revoke --jti JTI              one token (or --key-id ID: one API key)
    accord token revoke --subject accord/alice every credential of that user issued until now
    accord token --revoke JTI                  the older spelling of --jti, kept
                                               (compat.TOKEN_REVOKE_FLAG)

Tokens are people's: a service's token is signed by its own key (`accord keys token`), and
every service refuses an HS256 token with the ``service`` role. They are HS256 JWTs signed
with the development secret (data_dir()/jwt-secret, or
ACCORD_JWT_SECRET), the one every local service verifies with; they carry every claim the
services require and at most the longest lifetime of their kind (ACCORD_TOKEN_MAX_TTL_S,
ACCORD_SERVICE_TOKEN_MAX_TTL_S). Revocations go to the deny list (ACCORD_REVOKED_FILE or
data_dir()/revoked), which every service sharing it honours on the next request.
"""

from __future__ import annotations

from datetime import datetime

import typer

from accord.protocol.auth.names import DEFAULT_APP, ROLE_CUSTOMER, ROLE_SERVICE

# PyJWT, the settings model and the deny list are imported in the commands' bodies: `accord
# token --help` shows the options without them (#16; tests/cli/test_cli_lazy.py).

token_app = typer.Typer(help="Development tokens and the deny list.")


def _parse_before(value: str) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            "a Unix time or an ISO 8601 time with its offset", param_hint="--before"
        ) from None
    if moment.tzinfo is None:
        raise typer.BadParameter("give the time's offset (e.g. +00:00)", param_hint="--before")
    return moment.timestamp()


@token_app.callback(invoke_without_command=True)
def token(
    ctx: typer.Context,
    user: str = typer.Option("", "--user", help="Subject, e.g. alice or approver-1"),
    role: list[str] = typer.Option(
        [], "--role", help="Role (repeatable): customer, approver, service"
    ),
    tenant_app: str = typer.Option(DEFAULT_APP, "--app", help="Tenant app"),
    ttl: int = typer.Option(3600, "--ttl", min=1, help="Lifetime in seconds"),
    revoke_id: str = typer.Option(  # compat.TOKEN_REVOKE_FLAG
        "", "--revoke", help="Add this token id (jti) or API key id to the deny list"
    ),
    show_id: bool = typer.Option(False, "--show-id", help="Print the token id (jti) too"),
    scope: list[str] = typer.Option(
        [],
        "--scope",
        help="Grant (repeatable): a tool or skill a service may call (notes.search)",
    ),
) -> None:
    """Print a development bearer token (or revoke one with --revoke JTI)."""
    if ctx.invoked_subcommand is not None:
        return
    import jwt

    from accord.contracts.errors import AccordError
    from accord.protocol.auth import mint_token
    from accord.protocol.auth.claims import check_name, check_roles, max_ttl_s
    from accord.protocol.settings import current

    if revoke_id:
        _revoke_one(revoke_id)
        return
    if not user:
        raise typer.BadParameter("--user is required", param_hint="--user")
    roles = role or [ROLE_CUSTOMER]
    try:
        check_name("sub", user)
        check_name("app", tenant_app)
        granted = check_roles(roles)
    except AccordError as error:
        raise typer.BadParameter(error.message) from None
    if ROLE_SERVICE in granted:
        raise typer.BadParameter(
            "a service token is signed by the service's own key: `accord keys token SERVICE` "
            "(services refuse a service token signed with the shared secret)",
            param_hint="--role",
        )
    limit = max_ttl_s(granted, current())
    if ttl > limit:
        raise typer.BadParameter(
            f"at most {limit} s for these roles (services refuse longer-lived tokens)",
            param_hint="--ttl",
        )
    value = mint_token(user, roles, app=tenant_app, ttl_s=ttl, scopes=scope)
    if show_id:
        jti = jwt.decode(value, options={"verify_signature": False})["jti"]
        typer.echo(f"# jti {jti}", err=True)
    typer.echo(value)


def _revoke_one(credential_id: str) -> None:
    from accord.protocol.auth.revocation import revoke

    try:
        path = revoke(credential_id)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    typer.echo(f"revoked {credential_id} (deny list: {path})")


@token_app.command("revoke")
def revoke_cmd(
    jti: str = typer.Option("", "--jti", help="A token's id (its jti claim)"),
    key_id: str = typer.Option("", "--key-id", help="An API key's id"),
    subject: str = typer.Option(
        "", "--subject", help="APP/SUBJECT: every credential of this user issued until now"
    ),
    before: str = typer.Option(
        "", "--before", help="With --subject: refuse those issued before this time instead"
    ),
) -> None:
    """Add a credential, or every credential of a subject, to the deny list."""
    from accord.contracts.errors import AccordError
    from accord.protocol.auth.revocation import revoke_subject

    chosen = [v for v in (jti, key_id, subject) if v]
    if len(chosen) != 1:
        raise typer.BadParameter("give exactly one of --jti, --key-id, --subject")
    if before and not subject:
        raise typer.BadParameter("--before goes with --subject", param_hint="--before")
    if not subject:
        _revoke_one(jti or key_id)
        return
    app_name, slash, sub = subject.partition("/")
    if not slash:
        raise typer.BadParameter("APP/SUBJECT, e.g. accord/alice", param_hint="--subject")
    try:
        path, cutoff = revoke_subject(app_name, sub, before=_parse_before(before))
    except AccordError as error:
        raise typer.BadParameter(error.message, param_hint="--subject") from None
    shown = datetime.fromtimestamp(cutoff).astimezone().isoformat()
    typer.echo(f"revoked every credential of {subject} issued before {shown} (deny list: {path})")


def register(app: typer.Typer) -> None:
    app.add_typer(token_app, name="token")
