"""Production mode: what a service refuses to start with, and what development mode admits.

``ACCORD_MODE=production`` is the one setting. A service started in it checks its environment
before it binds a port and refuses (exit status 2, one line naming every problem) when:

- ``ACCORD_DEV``, ``ACCORD_FAULTS`` or ``ACCORD_TEST_PAUSE`` is set (development and test aids);
- ``ACCORD_JWT_SECRET`` is shorter than :data:`MIN_SECRET_BYTES`, or looks like a placeholder
  (the ``REPLACE_ME...`` value deploy/k8s/secret.yaml ships, ``changeme``, one character
  repeated...): such a secret lets anyone mint service and approver tokens;
- nothing can verify a token: neither a secret nor an identity provider (``ACCORD_JWKS`` /
  ``ACCORD_JWT_PUBLIC_KEY``); in development each process would make up a secret, which in a
  deployment means replicas that silently refuse each other's tokens;
- an A2A service (it calls other services) has no credential to send: neither
  ``ACCORD_SERVICE_TOKEN_FILE`` nor a secret to mint one with;
- ``ACCORD_JWKS`` is a plain ``http://`` URL (keys fetched in clear can be replaced on the way);
- ``ACCORD_DATABASE_URL`` still holds the manifest's placeholder password.

Development mode (the default) starts anyway and says, in one WARNING line, what production
would refuse, starting with the development secret it generated or uses and where it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from accord.protocol.auth import dev_secret_path
from accord.protocol.settings import AccordSettings, env_name

MIN_SECRET_BYTES: Final = 32
PLACEHOLDER: Final = re.compile(r"replace[_-]?me|change[_-]?me|placeholder|example|secret", re.I)
MIN_DISTINCT_CHARS: Final = 8  # "aaaa...", "abababab...": not a random secret


def placeholder_reason(value: str) -> str | None:
    """Why ``value`` cannot be a real secret, or None."""
    if len(value.encode()) < MIN_SECRET_BYTES:
        return f"is shorter than {MIN_SECRET_BYTES} bytes"
    if PLACEHOLDER.search(value):
        return "looks like a placeholder (e.g. the REPLACE_ME value deploy/k8s/secret.yaml ships)"
    if len(set(value)) < MIN_DISTINCT_CHARS:
        return f"has fewer than {MIN_DISTINCT_CHARS} distinct characters: not a random secret"
    return None


@dataclass(frozen=True)
class Rule:
    """One thing production refuses: ``problem(settings, calls_others)`` says why, or None."""

    problem: Callable[[AccordSettings, bool], str | None]


def _dev_aids(s: AccordSettings, _calls: bool) -> str | None:
    on = [env_name(n) for n in ("dev", "faults", "test_pause") if getattr(s, n)]
    return f"{', '.join(on)} (development and tests only)" if on else None


def _secret(s: AccordSettings, _calls: bool) -> str | None:
    if s.jwt_secret is None:
        return None
    why = placeholder_reason(s.jwt_secret.get_secret_value())
    return f"ACCORD_JWT_SECRET {why}" if why else None


def _verifier(s: AccordSettings, _calls: bool) -> str | None:
    if s.jwt_secret is None and s.jwks is None and s.jwt_public_key is None:
        return (
            "no way to verify tokens: set ACCORD_JWKS (an identity provider) or "
            "ACCORD_JWT_SECRET (the same on every service); production never makes one up"
        )
    return None


def _credential(s: AccordSettings, calls_others: bool) -> str | None:
    if calls_others and s.jwt_secret is None and s.service_token_file is None:
        return (
            "this service calls others but has no credential: set ACCORD_SERVICE_TOKEN_FILE "
            "(a token from the identity provider) or ACCORD_JWT_SECRET"
        )
    return None


def _jwks_transport(s: AccordSettings, _calls: bool) -> str | None:
    if s.jwks is not None and s.jwks.startswith("http://"):
        return "ACCORD_JWKS must be an https:// URL (or a file)"
    return None


def _database(s: AccordSettings, _calls: bool) -> str | None:
    if s.database_url and re.search(r"replace[_-]?me", s.database_url, re.I):
        return "ACCORD_DATABASE_URL holds a placeholder password"
    return None


RULES: Final = (
    Rule(_dev_aids),
    Rule(_secret),
    Rule(_verifier),
    Rule(_credential),
    Rule(_jwks_transport),
    Rule(_database),
)
"""Every refusal, one row each: a new one (an auth-off switch, say) is one more row."""


def refusals(settings: AccordSettings, *, calls_others: bool) -> list[str]:
    """What production mode refuses in ``settings`` (empty: it may start)."""
    return [why for rule in RULES if (why := rule.problem(settings, calls_others)) is not None]


def development_notice(settings: AccordSettings, *, created: bool) -> str | None:
    """The one WARNING line of a development start (None: nothing production would refuse)."""
    parts: list[str] = []
    if settings.jwt_secret is None:
        made = "generated now" if created else "generated earlier"
        parts.append(
            f"tokens are signed with the development secret {dev_secret_path()} ({made}), "
            "shared by every process using this data directory"
        )
    # The secret and credential rules are met by the development secret; the others are not.
    for rule in (_dev_aids, _secret, _jwks_transport, _database):
        why = rule(settings, False)
        if why is not None:
            parts.append(why)
    if not parts:
        return None
    return f"development mode (ACCORD_MODE=production would refuse to start): {'; '.join(parts)}"
