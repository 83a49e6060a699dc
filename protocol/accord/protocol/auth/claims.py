"""What a credential must say before it becomes a :class:`~accord.protocol.auth.Principal`.

One set of rules for bearer tokens (whatever signed them) and API keys:

- ``app`` and ``sub`` match :data:`NAME_PATTERN`: letters, digits and ``. _ : @ -``, starting
  with a letter or digit, at most 128 characters. No ``/``: the owner scope of a task is
  ``app/sub``, and with a ``/`` in either part ``accord`` + ``team/alice`` and ``accord/team`` +
  ``alice`` would share one scope. The set is the envelope's ``Identifier`` without ``/``, so a
  subject can always travel as the envelope's tenant user.
- ``roles``: at least one, each from :data:`KNOWN_ROLES`. An unknown role is refused, not
  ignored: permissions are allow-lists, and a role nobody knows is an issuer's mistake (or an
  attempt) the operator should hear about, not a role that quietly means nothing.
- Tokens only: ``iss`` among the configured issuers, ``aud`` naming the configured audience,
  ``iat``, ``exp`` and ``jti`` present (``exp``, ``nbf`` and ``iat`` JSON numbers, never numeric
  strings), and ``exp - iat`` at most the lifetime of the kind of
  principal (a person: ``ACCORD_TOKEN_MAX_TTL_S``, 24 h; a service:
  ``ACCORD_SERVICE_TOKEN_MAX_TTL_S``, 1 h). A token without ``jti`` could never be revoked.

A refusal is UNAUTHENTICATED and its message names the claim, so a caller (or the operator
reading a 401's ``error_description``) knows what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth.tokens import (
    DEFAULT_APP,
    ROLE_APPROVER,
    ROLE_CUSTOMER,
    ROLE_SERVICE,
    Principal,
)
from accord.protocol.settings import AccordSettings

NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
KNOWN_ROLES: Final = frozenset({ROLE_CUSTOMER, ROLE_APPROVER, ROLE_SERVICE})
REQUIRED_CLAIMS: Final = ("iss", "aud", "sub", "iat", "exp", "jti")
JTI_MAX: Final = 256
TIME_CLAIMS: Final = ("exp", "nbf", "iat")


class ClaimError(AccordError):
    """A credential whose claims break a rule above (UNAUTHENTICATED, naming the claim)."""

    def __init__(self, claim: str, why: str) -> None:
        super().__init__(ErrorCode.UNAUTHENTICATED, f"claim {claim!r} {why}", {"claim": claim})
        self.claim = claim


def check_name(claim: str, value: object) -> str:
    """``value`` if it is a valid app or subject name, else :class:`ClaimError`."""
    if not isinstance(value, str) or not value:
        raise ClaimError(claim, "is missing or not a string")
    if NAME_PATTERN.fullmatch(value) is None:
        raise ClaimError(
            claim,
            "may hold only letters, digits and . _ : @ - (no '/'), at most 128, "
            "starting with a letter or digit",
        )
    return value


def check_roles(value: object) -> frozenset[str]:
    """A non-empty list (or space-separated string) of known roles."""
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list | tuple) or not all(isinstance(r, str) for r in value):
        raise ClaimError("roles", "must be a list of strings")
    roles = frozenset(value)
    if not roles:
        raise ClaimError("roles", "must name at least one role")
    unknown = sorted(roles - KNOWN_ROLES)
    if unknown:
        known = ", ".join(sorted(KNOWN_ROLES))
        raise ClaimError("roles", f"holds unknown role(s) {', '.join(unknown)} (known: {known})")
    return roles


def check_scopes(value: object) -> frozenset[str]:
    """The OAuth ``scope`` claim: one space-separated string (RFC 8693 / RFC 9068)."""
    if value is None:
        return frozenset()
    if not isinstance(value, str):
        raise ClaimError("scope", "must be a space-separated string")
    return frozenset(value.split())


def max_ttl_s(roles: Iterable[str], settings: AccordSettings) -> int:
    """The longest lifetime a credential of these roles may have."""
    if ROLE_SERVICE in set(roles):
        return settings.service_token_max_ttl_s
    return settings.token_max_ttl_s


def principal_from_claims(
    claims: Mapping[str, Any], settings: AccordSettings, *, leeway_s: float, now: float
) -> Principal:
    """The principal of a token whose signature, ``exp``, ``iss`` and ``aud`` PyJWT checked."""
    for name in REQUIRED_CLAIMS:
        if claims.get(name) in (None, ""):
            raise ClaimError(name, "is required")
    subject = check_name("sub", claims["sub"])
    app = check_name("app", claims.get("app", DEFAULT_APP))
    roles = check_roles(claims.get("roles"))
    jti = claims["jti"]
    if not isinstance(jti, str) or len(jti) > JTI_MAX or not jti.strip() or " " in jti:
        raise ClaimError("jti", f"must be a string without spaces, at most {JTI_MAX} long")
    for name in TIME_CLAIMS:
        # PyJWT reads "exp": "1799999999" as a number; RFC 7519 says a NumericDate is a JSON
        # number, and an issuer that writes a string has a bug we should not paper over.
        value = claims.get(name)
        if name in claims and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise ClaimError(name, "must be a JSON number (seconds since 1970)")
    issued, expires = claims["iat"], claims["exp"]
    if issued > now + leeway_s:
        raise ClaimError("iat", "is in the future")
    limit = max_ttl_s(roles, settings)
    if float(expires) - float(issued) > limit:
        raise ClaimError("exp", f"is more than {limit} s after 'iat' (the longest lifetime)")
    return Principal(
        subject=subject,
        roles=roles,
        app=app,
        credential_id=jti,
        scopes=check_scopes(claims.get("scope")),
        issued_at=float(issued),
    )
