"""Verify a request's credential and return its :class:`Principal`.

People's bearer JWTs: HS256 with the shared secret (:func:`accord.protocol.auth.configured_secret`;
in production mode only when ``ACCORD_JWT_SECRET`` is set), or RS256 / ES256 with the identity
provider's keys (:mod:`accord.protocol.auth.jwks`: ``ACCORD_JWKS`` or ``ACCORD_JWT_PUBLIC_KEY``).
The key is chosen by the token's ``alg`` so a public key can never be used as an HMAC secret.

Service tokens (role ``service``) take another road: only the key of the service the token
names, from the trust table (:mod:`accord.protocol.auth.trust`), verifies it, and the grants and
tenants are the table's. A token with role ``service`` that any other key signed (the shared
secret, the people's identity provider) is refused: whoever holds those could mint any service.

Signature, ``exp``, ``iss`` and ``aud`` are PyJWT's checks; the rest of the claims are
:mod:`accord.protocol.auth.claims`'. ``X-API-Key``: :class:`~accord.protocol.auth.api_keys.ApiKeys`.
Either way the deny list (credential, subject, service key) is checked on every request.

A verified token is remembered (bounded, until it expires): clients present the same token on
every request, and a signature check costs far more than the request's own work here. The deny
list is still read for every request, and a service token's key must still be published, so
revocation is not delayed by the cache.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import jwt

from accord.contracts import compat
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import API_KEY_HEADER
from accord.protocol.auth.api_keys import ApiKeys
from accord.protocol.auth.claims import ClaimError, principal_from_claims
from accord.protocol.auth.jwks import ASYMMETRIC, PublicKeys
from accord.protocol.auth.revocation import RevocationList
from accord.protocol.auth.tokens import HS_ALGORITHM, ROLE_SERVICE, Principal, configured_secret
from accord.protocol.auth.trust import SERVICE_PREFIX, TrustedService, TrustTable, load_trust
from accord.protocol.settings import AccordSettings, current

logger = logging.getLogger(__name__)

LEEWAY_S = 5
CACHE_SIZE = 10_000


def _now() -> float:
    return time.time()


def _unauthenticated(message: str) -> AccordError:
    return AccordError(ErrorCode.UNAUTHENTICATED, message)


class Authenticator:
    """Turns request headers into a verified principal, or raises UNAUTHENTICATED.

    ``secret=None`` means the configured one; ``secret=""`` none at all (no HS256)."""

    def __init__(
        self,
        *,
        secret: str | None = None,
        public_key: str | None = None,
        api_keys: ApiKeys | None = None,
        revoked: RevocationList | None = None,
        jwks: str | None = None,
        settings: AccordSettings | None = None,
        trust: TrustTable | None = None,
    ) -> None:
        self._settings = settings or current()
        self._secret = configured_secret() if secret is None else secret
        self._keys = PublicKeys(
            jwks if jwks is not None else self._settings.jwks,
            public_key if public_key is not None else self._settings.jwt_public_key,
        )
        self._api_keys = api_keys or ApiKeys()
        self._revoked = revoked or RevocationList()
        self._trust = trust or load_trust()
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
        refused = self._revoked.refuses(principal)
        if refused is not None:
            raise _unauthenticated(refused)
        return principal

    def _verify_jwt(self, token: str) -> Principal:
        cached = self._verified.get(token)
        if cached is not None:
            principal, expires = cached
            if _now() <= expires + LEEWAY_S:
                self._check_key_published(principal)
                return principal
            del self._verified[token]
            raise _unauthenticated("bearer token has expired")
        principal, expires = self._decode(token)
        self._verified[token] = (principal, expires)
        if len(self._verified) > CACHE_SIZE:
            self._verified.popitem(last=False)
        return principal

    def _key(self, token: str, header: dict[str, Any]) -> Any:
        alg = header.get("alg")
        if alg == HS_ALGORITHM and self._secret:
            return self._secret
        if alg in ASYMMETRIC and self._keys.configured:
            return self._keys.key_for(token, header)
        raise _unauthenticated(f"bearer token algorithm {alg!r} is not accepted")

    def _check_key_published(self, principal: Principal) -> None:
        if principal.key_id and not self._trust.still_published(
            principal.subject.removeprefix(SERVICE_PREFIX), principal.key_id
        ):
            raise _unauthenticated("the service key that signed this token is no longer published")

    def _decode(self, token: str) -> tuple[Principal, float]:
        try:
            header = jwt.get_unverified_header(token)
            unverified: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise _unauthenticated("malformed bearer token") from None
        if _claims_service(unverified):
            return self._decode_service(token, header, unverified)
        return self._checked(token, self._key(token, header), header)

    def _decode_service(
        self, token: str, header: dict[str, Any], unverified: Mapping[str, Any]
    ) -> tuple[Principal, float]:
        entry = self._trust.entry_for(unverified.get("sub"))
        if (
            self._secret
            and header.get("alg") == HS_ALGORITHM
            and entry.accepts_shared_secret(_now())
        ):
            return self._shared_secret_service(token, header, unverified, entry)
        key = self._trust.key_for(entry, header)
        principal, expires = self._checked(token, key, header, issuer=entry.issuer)
        # The verifier's table decides what the service may do; the token may only ask for less.
        claimed = "scope" in unverified
        grants = entry.grants & principal.scopes if claimed else entry.grants
        principal = replace(
            principal, scopes=grants, key_id=str(header["kid"]), tenants=entry.tenants
        )
        return principal, expires

    @compat.kept_for(compat.SHARED_SECRET_SERVICE_TOKENS)
    def _shared_secret_service(
        self,
        token: str,
        header: dict[str, Any],
        unverified: Mapping[str, Any],
        entry: TrustedService,
    ) -> tuple[Principal, float]:
        """A 0.2 service's token, in its entry's upgrade window (auth.trust): the people's
        issuers, as 0.2 signed it; the entry's grants and tenants, as for a key's token."""
        principal, expires = self._checked(token, self._secret, header)
        logger.warning(
            "service %s: accepted a token signed with the shared secret (upgrade window until %s)",
            entry.name,
            entry.shared_secret_until,
        )
        claimed = "scope" in unverified
        grants = entry.grants & principal.scopes if claimed else entry.grants
        return replace(principal, scopes=grants, tenants=entry.tenants), expires

    def _checked(
        self, token: str, key: Any, header: dict[str, Any], issuer: str | None = None
    ) -> tuple[Principal, float]:
        settings = self._settings
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[str(header.get("alg"))],
                audience=settings.jwt_audience,
                issuer=[issuer] if issuer is not None else list(settings.jwt_issuers),
                options={"require": ["iss", "aud", "sub", "iat", "exp", "jti"]},
                leeway=LEEWAY_S,
            )
        except jwt.ExpiredSignatureError:
            raise _unauthenticated("bearer token has expired") from None
        except jwt.MissingRequiredClaimError as error:
            raise ClaimError(error.claim, "is required") from None
        except jwt.InvalidIssuerError:
            raise ClaimError("iss", "is not an accepted issuer") from None
        except jwt.InvalidAudienceError:
            raise ClaimError(
                "aud", f"does not name this audience ({settings.jwt_audience})"
            ) from None
        except jwt.InvalidIssuedAtError:
            raise ClaimError("iat", "must be a number (seconds since 1970)") from None
        except jwt.ImmatureSignatureError:
            raise _unauthenticated("bearer token is not valid yet ('iat' or 'nbf')") from None
        except jwt.PyJWTError:
            raise _unauthenticated("bearer token is invalid") from None
        principal = principal_from_claims(claims, settings, leeway_s=LEEWAY_S, now=_now())
        return principal, float(claims["exp"])


def _claims_service(claims: Mapping[str, Any]) -> bool:
    """Whether a token (not yet verified) asks to be a service: then only a service key may
    have signed it."""
    roles = claims.get("roles")
    if isinstance(roles, str):
        roles = roles.split()
    return isinstance(roles, list) and ROLE_SERVICE in roles
