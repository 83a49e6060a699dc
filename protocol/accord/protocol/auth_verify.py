"""Verify a request's credential and return its :class:`Principal`.

Bearer JWTs: HS256 with the shared secret (:func:`accord.protocol.auth.jwt_secret`), or RS256 /
ES256 with ``ACCORD_JWT_PUBLIC_KEY``. The key is chosen by the token's ``alg`` so a public key
can never be used as an HMAC secret. ``X-API-Key``: :class:`~accord.protocol.auth_keys.ApiKeys`.
Either way the credential id is checked against the deny list on every request.

A verified token is remembered (bounded, until it expires): clients present the same token on
every request, and a signature check costs far more than the request's own work here. The deny
list is still read for every request, so revocation is not delayed by the cache.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jwt

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import API_KEY_HEADER
from accord.protocol.auth import DEFAULT_APP, HS_ALGORITHM, Principal, jwt_secret
from accord.protocol.auth_keys import ApiKeys
from accord.protocol.auth_revocation import RevocationList
from accord.protocol.settings import current

ASYMMETRIC = ("RS256", "ES256")
LEEWAY_S = 5
CACHE_SIZE = 10_000


def _now() -> float:
    return time.time()


def _unauthenticated(message: str) -> AccordError:
    return AccordError(ErrorCode.UNAUTHENTICATED, message)


def _load_public_key() -> str | None:
    raw = current().jwt_public_key
    if raw is None:
        return None
    if raw.startswith("-----BEGIN"):
        return raw
    return Path(raw).expanduser().read_text()


class Authenticator:
    """Turns request headers into a verified principal, or raises UNAUTHENTICATED."""

    def __init__(
        self,
        *,
        secret: str | None = None,
        public_key: str | None = None,
        api_keys: ApiKeys | None = None,
        revoked: RevocationList | None = None,
    ) -> None:
        self._secret = secret or jwt_secret()
        self._public_key = public_key if public_key is not None else _load_public_key()
        self._api_keys = api_keys or ApiKeys()
        self._revoked = revoked or RevocationList()
        self._verified: OrderedDict[str, tuple[Principal, float]] = OrderedDict()

    def authenticate(self, headers: Mapping[str, str]) -> Principal:
        """``headers`` keys are lower-case (as in an ASGI scope)."""
        authorization = headers.get("authorization", "")
        api_key = headers.get(API_KEY_HEADER.lower(), "")
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise _unauthenticated("Authorization header must be 'Bearer <token>'")
            principal = self._verify_jwt(token.strip())
        elif api_key:
            found = self._api_keys.lookup(api_key.strip())
            if found is None:
                raise _unauthenticated("unknown API key")
            principal = found
        else:
            raise _unauthenticated(
                f"missing credential: send 'Authorization: Bearer <token>' or '{API_KEY_HEADER}'"
            )
        if self._revoked.is_revoked(principal.credential_id):
            raise _unauthenticated("credential has been revoked")
        return principal

    def _verify_jwt(self, token: str) -> Principal:
        cached = self._verified.get(token)
        if cached is not None:
            principal, expires = cached
            if _now() <= expires + LEEWAY_S:
                return principal
            del self._verified[token]
            raise _unauthenticated("bearer token has expired")
        principal, expires = self._decode(token)
        self._verified[token] = (principal, expires)
        if len(self._verified) > CACHE_SIZE:
            self._verified.popitem(last=False)
        return principal

    def _decode(self, token: str) -> tuple[Principal, float]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _unauthenticated("malformed bearer token") from None
        alg = header.get("alg")
        key: str
        if alg == HS_ALGORITHM:
            key = self._secret
        elif alg in ASYMMETRIC and self._public_key:
            key = self._public_key
        else:
            raise _unauthenticated(f"bearer token algorithm {alg!r} is not accepted")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[str(alg)],
                options={"require": ["sub", "exp"]},
                leeway=LEEWAY_S,
            )
        except jwt.ExpiredSignatureError:
            raise _unauthenticated("bearer token has expired") from None
        except jwt.PyJWTError:
            raise _unauthenticated("bearer token is invalid") from None
        roles = claims.get("roles", [])
        if isinstance(roles, str):
            roles = roles.split()
        if not isinstance(roles, list):
            raise _unauthenticated("bearer token 'roles' claim must be a list")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise _unauthenticated("bearer token has no subject")
        app = claims.get("app") or DEFAULT_APP
        scope = claims.get("scope", "")
        if not isinstance(scope, str):
            raise _unauthenticated("bearer token 'scope' claim must be a space-separated string")
        principal = Principal(
            subject=subject,
            roles=frozenset(str(r) for r in roles),
            app=str(app),
            credential_id=str(claims.get("jti") or ""),
            scopes=frozenset(scope.split()),
        )
        return principal, float(claims["exp"])
