"""`accord keys`: each service's own signing keys (docs/service-keys.md).

    accord keys list [SERVICE]                  every key: kid, created, signing / retiring / ...
    accord keys rotate SERVICE [--grace 3600]   a new key signs from now; the old ones stay
                                                published --grace seconds (tokens they signed
                                                stay valid until they expire)
    accord keys revoke SERVICE KID              the key leaves the ring and the JWKS at once and
                                                goes to the deny list: its tokens fail on the
                                                next request of every verifier sharing the list,
                                                within ACCORD_SERVICE_JWKS_TTL_S on the others
    accord keys token SERVICE [--scope S]...    a token signed by SERVICE's key (scripts, the
                                                contract test kit against a local mesh)

They work on ACCORD_KEYS_DIR (default: the data directory's ``keys``), where `accord up` and
`accord serve` keep them in development; in production run them where the key rings are kept
and ship the result as each service's Secret (deploy/k8s, compose.yaml).
"""

from __future__ import annotations

from datetime import datetime

import typer

# The key and JWT libraries are imported in the commands' bodies: `accord keys --help` shows
# the options without them (#16).

keys_app = typer.Typer(help="Each service's signing keys: list, rotate, revoke.")


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).astimezone().isoformat(timespec="seconds")


def _checked(service: str) -> str:
    from accord.protocol.service_keys import check_service_name

    try:
        return check_service_name(service)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="SERVICE") from None


@keys_app.command("list")
def list_cmd(
    service: str = typer.Argument("", help="One service (default: every service with keys)"),
) -> None:
    """Every key of each service: its kid, when it was made, and what it does now."""
    import time

    from accord.protocol.service_keys import keys_dir, read_ring

    root = keys_dir()
    names = (
        [_checked(service)]
        if service
        else sorted(p.name for p in root.iterdir() if p.is_dir())
        if root.is_dir()
        else []
    )
    now = time.time()
    for name in names:
        ring = read_ring(name)
        if ring is None:
            typer.echo(f"{name}: no keys in {root}")
            continue
        signer = next((k.kid for k in reversed(ring.keys) if k.retires_at is None), None)
        for key in ring.keys:
            if key.kid == signer:
                state = "signing"
            elif key.retires_at is not None and key.published_at(now):
                state = f"retiring (published until {_when(key.retires_at)})"
            else:
                state = "retired"
            typer.echo(f"{name}\t{key.kid}\tmade {_when(key.created)}\t{state}")


@keys_app.command("rotate")
def rotate_cmd(
    service: str = typer.Argument(..., help="The service whose key to replace, e.g. risk"),
    grace: float = typer.Option(
        3600.0,
        "--grace",
        min=0,
        help="Seconds the old keys stay published (at least the longest service token life)",
    ),
) -> None:
    """Make a new signing key; the old ones stay verifiable for --grace seconds."""
    from accord.protocol.service_keys import rotate, service_dir

    _ring, fresh = rotate(_checked(service), grace)
    typer.echo(f"{service}: key {fresh.kid} signs from now (key ring: {service_dir(service)})")


@keys_app.command("revoke")
def revoke_cmd(
    service: str = typer.Argument(..., help="The service the key belongs to"),
    kid: str = typer.Argument(..., help="The key's id (`accord keys list`)"),
) -> None:
    """Refuse every token the key signed, at once: off the JWKS and onto the deny list."""
    from accord.protocol.auth.revocation import revoke_key
    from accord.protocol.service_keys import remove

    name = _checked(service)
    try:
        _ring, fresh = remove(name, kid)
    except LookupError as error:
        raise typer.BadParameter(str(error), param_hint="KID") from None
    path = revoke_key(name, kid)
    typer.echo(f"{name}: key {kid} revoked (JWKS rewritten; deny list: {path})")
    if fresh is not None:
        typer.echo(f"{name}: it was the signing key; key {fresh.kid} signs from now")


@keys_app.command("token")
def token_cmd(
    service: str = typer.Argument(..., help="The service to sign as (an agent's name)"),
    scope: list[str] = typer.Option(
        [], "--scope", help="Ask for fewer grants (repeatable); the verifier's table caps them"
    ),
    ttl: int = typer.Option(3600, "--ttl", min=1, help="Lifetime in seconds"),
) -> None:
    """Print a service token signed by SERVICE's own key (it must be in ACCORD_KEYS_DIR)."""
    from accord.protocol.auth import service_token
    from accord.protocol.auth.claims import max_ttl_s
    from accord.protocol.auth.names import ROLE_SERVICE
    from accord.protocol.settings import current

    limit = max_ttl_s([ROLE_SERVICE], current())
    if ttl > limit:
        raise typer.BadParameter(f"at most {limit} s for a service token", param_hint="--ttl")
    typer.echo(service_token(_checked(service), ttl_s=ttl, scopes=scope))


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
