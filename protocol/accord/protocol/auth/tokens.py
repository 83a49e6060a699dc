"""Who is calling: principals, development tokens, and the credential a service sends.

The principal always comes from a verified credential (a JWT or a static API key), never from
message text, metadata or a model. Development tokens are HS256 JWTs signed with a secret kept
in ``data_dir()/jwt-secret`` (created 0600 on first use) unless ``ACCORD_JWT_SECRET`` is set; in
production mode (``ACCORD_MODE=production``) no secret is ever created: it is configured, or
there is none and tokens come from an identity provider (``ACCORD_JWKS``), services then
holding their own token in ``ACCORD_SERVICE_TOKEN_FILE``.

The claim rules live in :mod:`accord.protocol.auth.claims`, API keys in
:mod:`accord.protocol.auth.api_keys`, the deny list in :mod:`accord.protocol.auth.revocation`,
identity-provider keys in :mod:`accord.protocol.auth.jwks`, and :class:`Authenticator` (in
:mod:`accord.protocol.auth.verify`) ties them together for the server middleware.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import jwt

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth.names import DEFAULT_APP as DEFAULT_APP
from accord.protocol.auth.names import ROLE_APPROVER as ROLE_APPROVER
from accord.protocol.auth.names import ROLE_CUSTOMER as ROLE_CUSTOMER
from accord.protocol.auth.names import ROLE_SERVICE as ROLE_SERVICE
from accord.protocol.private_files import create_once
from accord.protocol.settings import AccordSettings, current, data_dir

ISSUER: Final = "accord"
HS_ALGORITHM: Final = "HS256"
SECRET_FILE: Final = "jwt-secret"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller, as read from a verified credential."""

    subject: str  # "U-17", "svc:triage", "approver-1"
    roles: frozenset[str]  # {"customer"}, {"approver"}, {"service"}
    app: str = DEFAULT_APP  # tenant app
    credential_id: str = ""  # jwt jti or api key id, for revocation and logs
    scopes: frozenset[str] = frozenset()  # OAuth ``scope`` claim: what a service was granted
    issued_at: float | None = None  # a token's ``iat`` (None: an API key), for revocation
    key_id: str = ""  # the service key (``kid``) that signed a service token, for revocation
    # Tenant apps a service may act for, from the verifier's trust table ("*": any);
    # None: not restricted by one (a person, or a service API key).
    tenants: frozenset[str] | None = None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def has_role(self, role: str) -> bool:
        return role in self.roles

    @property
    def is_service(self) -> bool:
        return ROLE_SERVICE in self.roles

    def may_act_for_app(self, app: str) -> bool:
        return self.tenants is None or "*" in self.tenants or app in self.tenants

    @property
    def owner(self) -> str:
        """The owner scope of this principal's tasks: app and subject, never ambiguous."""
        return owner_key(self.app, self.subject)


def owner_key(app: str, subject: str) -> str:
    # "/" cannot appear in an app name, so the pair is recoverable from the key.
    return f"{app}/{subject}"


def dev_secret_path() -> Path:
    """Where the development secret is kept (and created) when none is configured."""
    return data_dir() / SECRET_FILE


def configured_secret() -> str | None:
    """The HS256 secret: ``ACCORD_JWT_SECRET``; else, in development, the data directory's
    (created 0600 on first use); else (production without one) None: no HS256 at all."""
    settings = current()
    if settings.jwt_secret is not None:
        return settings.jwt_secret.get_secret_value()
    if settings.mode == "production":
        return None  # each replica making up its own secret is how a mesh splits silently
    path = dev_secret_path()
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    return create_once(path, secrets.token_urlsafe(48))


def jwt_secret() -> str:
    """The HS256 secret (:func:`configured_secret`); production without one is an error."""
    value = configured_secret()
    if value is None:
        raise AccordError(
            ErrorCode.UNAUTHENTICATED,
            "no ACCORD_JWT_SECRET in production mode: tokens cannot be signed here",
        )
    return value


def _read_secret(path: Path) -> str:
    value = path.read_text().strip()
    if not value:
        raise FileNotFoundError(path)
    return value


def token_claims(
    subject: str,
    roles: Iterable[str],
    *,
    app: str = DEFAULT_APP,
    ttl_s: int = 3600,
    scopes: Iterable[str] = (),
    issued_at: int | None = None,
) -> dict[str, object]:
    """Every claim the verifier requires (``iss`` ``accord``, ``aud`` the configured audience,
    ``iat``, ``exp``, ``jti``); ``issued_at`` backdates them (tests of revocation)."""
    now = int(time.time()) if issued_at is None else issued_at
    claims: dict[str, object] = {
        "iss": ISSUER,
        "aud": current().jwt_audience,
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
    return claims


def mint_token(
    subject: str,
    roles: Iterable[str],
    *,
    app: str = DEFAULT_APP,
    ttl_s: int = 3600,
    secret: str | None = None,
    scopes: Iterable[str] = (),
    issued_at: int | None = None,
) -> str:
    """A signed HS256 token for a person: ``subject`` with ``roles`` (development).

    Verifiers refuse an HS256 token with role ``service``: a service's token is signed by its
    own key (:func:`service_token`)."""
    claims = token_claims(subject, roles, app=app, ttl_s=ttl_s, scopes=scopes, issued_at=issued_at)
    return jwt.encode(claims, secret or jwt_secret(), algorithm=HS_ALGORITHM)


def service_token(service_name: str, *, ttl_s: int = 3600, scopes: Iterable[str] = ()) -> str:
    """The bearer token this service sends to other services; call it for every request.

    With ``ACCORD_SERVICE_TOKEN_FILE`` set, the token in that file (rotated by whoever writes
    it; verifiers check it against their trust table all the same). Otherwise a token signed
    ES256 by this service's own key (:mod:`accord.protocol.service_keys`): role ``service``,
    subject ``svc:<name>``, asking for the ``scopes`` (the verifier grants at most what its
    trust table says), renewed at half its life or when the signing key changes."""
    settings = current()
    if settings.service_token_file is not None:
        return _token_file.read(settings.service_token_file)
    from accord.protocol import service_keys  # cryptography: only processes that sign pay for it

    signer = service_keys.rings.get(service_name).signer().kid
    key = (service_name, ttl_s, tuple(sorted(set(scopes))))
    now = time.monotonic()
    with _minted_lock:
        cached = _minted.get(key)
        # Kept while the settings are the same object (the environment did not change: same
        # data directory), the key is the same and until half its life: verifiers cache it too.
        if cached is not None and cached[1] is settings and cached[3] == signer and now < cached[2]:
            return cached[0]
        claims = token_claims(f"svc:{service_name}", [ROLE_SERVICE], ttl_s=ttl_s, scopes=key[2])
        token = service_keys.sign(service_name, claims)
        _minted[key] = (token, settings, now + ttl_s / 2, signer)
        return token


_minted: dict[tuple[str, int, tuple[str, ...]], tuple[str, AccordSettings, float, str]] = {}
_minted_lock = threading.Lock()


class _TokenFile:
    """The token in a file, read again when the file's mtime or size changes."""

    def __init__(self) -> None:
        self._stamp: tuple[Path, int, int] | None = None
        self._token = ""
        self._lock = threading.Lock()

    def read(self, path: Path) -> str:
        try:
            st = path.stat()
            stamp = (path, st.st_mtime_ns, st.st_size)
            with self._lock:
                if stamp != self._stamp:
                    self._token = path.read_text().strip()
                    self._stamp = stamp
                token = self._token
        except OSError:
            token = ""
        if not token:
            raise AccordError(
                ErrorCode.UNAVAILABLE,
                "the service token file (ACCORD_SERVICE_TOKEN_FILE) is missing or empty",
                {"path": str(path)},
            )
        return token


_token_file = _TokenFile()
