"""Who is calling: principals, development tokens, and verification of bearer JWTs.

The principal always comes from a verified credential (a JWT or a static API key), never from
message text, metadata or a model. Development tokens are HS256 JWTs signed with a secret kept
in ``data_dir()/jwt-secret`` (created 0600 on first use) unless ``ACCORD_JWT_SECRET`` is set;
deployments with an identity provider set ``ACCORD_JWT_PUBLIC_KEY`` (PEM text or a path to a PEM
file) to verify RS256/ES256 tokens as well.

API keys live in :mod:`accord.protocol.auth_keys`, the deny list in
:mod:`accord.protocol.auth_revocation`, and :class:`Authenticator` (in
:mod:`accord.protocol.auth_verify`) ties them together for the server middleware.
"""

from __future__ import annotations

import os
import secrets
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import jwt

from accord.protocol.settings import current, data_dir

DEFAULT_APP: Final = "accord"
ISSUER: Final = "accord"
HS_ALGORITHM: Final = "HS256"
ROLE_SERVICE: Final = "service"
ROLE_CUSTOMER: Final = "customer"
ROLE_APPROVER: Final = "approver"
SECRET_FILE: Final = "jwt-secret"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller, as read from a verified credential."""

    subject: str  # "C-01", "svc:orchestrator", "approver-1"
    roles: frozenset[str]  # {"customer"}, {"approver"}, {"service"}
    app: str = DEFAULT_APP  # tenant app
    credential_id: str = ""  # jwt jti or api key id, for revocation and logs
    scopes: frozenset[str] = frozenset()  # OAuth ``scope`` claim: what a service was granted

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def has_role(self, role: str) -> bool:
        return role in self.roles

    @property
    def is_service(self) -> bool:
        return ROLE_SERVICE in self.roles

    @property
    def owner(self) -> str:
        """The owner scope of this principal's tasks: app and subject, never ambiguous."""
        return owner_key(self.app, self.subject)


def owner_key(app: str, subject: str) -> str:
    # "/" cannot appear in an app name, so the pair is recoverable from the key.
    return f"{app}/{subject}"


def jwt_secret() -> str:
    """``ACCORD_JWT_SECRET``, or the development secret in the data dir (created 0600)."""
    configured = current().jwt_secret
    if configured is not None:
        return configured.get_secret_value()
    path = data_dir() / SECRET_FILE
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    value = secrets.token_urlsafe(48)
    try:
        # O_EXCL: two services starting together must not write two different secrets.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_secret(path)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    return value


def _read_secret(path: Path) -> str:
    value = path.read_text().strip()
    if not value:
        raise FileNotFoundError(path)
    return value


def mint_token(
    subject: str,
    roles: Iterable[str],
    *,
    app: str = DEFAULT_APP,
    ttl_s: int = 3600,
    secret: str | None = None,
    scopes: Iterable[str] = (),
) -> str:
    """A signed HS256 token for ``subject`` with ``roles`` (development and service use)."""
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": ISSUER,
        "sub": subject,
        "roles": sorted(set(roles)),
        "app": app,
        "jti": uuid.uuid4().hex,
        "iat": now,
        "exp": now + ttl_s,
    }
    granted = sorted(set(scopes))
    if granted:
        claims["scope"] = " ".join(granted)
    return jwt.encode(claims, secret or jwt_secret(), algorithm=HS_ALGORITHM)


def service_token(service_name: str, *, ttl_s: int = 3600, scopes: Iterable[str] = ()) -> str:
    """A token with role ``service`` and subject ``svc:<name>``, for calls between services;
    ``scopes`` are the grants it carries (the tools it may call)."""
    return mint_token(f"svc:{service_name}", [ROLE_SERVICE], ttl_s=ttl_s, scopes=scopes)
