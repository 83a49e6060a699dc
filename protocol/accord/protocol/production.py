"""Production mode: what a service refuses to start with, and what development mode admits.

``ACCORD_MODE=production`` is the one setting. A service started in it checks its environment
before it binds a port and refuses (exit status 2, one line naming every problem) when:

- ``ACCORD_DEV``, ``ACCORD_FAULTS`` or ``ACCORD_TEST_PAUSE`` is set (development and test aids);
- ``ACCORD_JWT_SECRET`` is shorter than :data:`MIN_SECRET_BYTES`, looks like a placeholder
  (the ``REPLACE_ME...`` value deploy/k8s/secret.yaml ships, ``changeme``) or is guessable
  (an entropy estimate, :mod:`accord.protocol.secret_strength`): such a secret lets anyone mint
  people's tokens, approvers' included;
- nothing can verify a person's token: neither a secret nor an identity provider
  (``ACCORD_JWKS`` / ``ACCORD_JWT_PUBLIC_KEY``); in development each process would make up a
  secret, which in a deployment means replicas that silently refuse each other's tokens;
- the service has no signing key of its own (``ACCORD_KEYS_DIR/NAME/keyring.json``, readable by
  its owner only) and no ``ACCORD_SERVICE_TOKEN_FILE``: a shared HS256 secret never signs a
  service token (any service holding it could mint another's authority, issue #30);
- there is no trust table (``ACCORD_SERVICE_TRUST``): which services' tokens it accepts, under
  which keys, with which grants, is the deployment's to say;
- the API key file (``ACCORD_API_KEYS``) may be read by group or others, or holds a short or
  guessable key;
- ``ACCORD_JWKS`` is a plain ``http://`` URL (keys fetched in clear can be replaced on the way);
- ``ACCORD_DATABASE_URL`` still holds the manifest's placeholder password;
- an A2A agent has no ``ACCORD_PUSH_SECRETS_KEY``, or one that is not 32 bytes in base64: the
  callers' push credentials are encrypted with it, and replicas with keys of their own could
  not read each other's (docs/push-notifications.md).

Development mode (the default) starts anyway and says, in one WARNING line, what production
would refuse, starting with the development secret it generated or uses and where it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from accord.protocol.auth import dev_secret_path
from accord.protocol.auth.api_keys import ApiKeys
from accord.protocol.private_files import shared_reason
from accord.protocol.push.secrets import SETTING as PUSH_KEY_SETTING
from accord.protocol.push.secrets import dev_key_path, key_problem
from accord.protocol.secret_strength import MIN_SECRET_BYTES as MIN_SECRET_BYTES
from accord.protocol.secret_strength import weakness
from accord.protocol.service_keys import KEYRING_FILE, service_dir
from accord.protocol.settings import AccordSettings, env_name


def placeholder_reason(value: str) -> str | None:
    """Why ``value`` cannot be a real secret, or None (:mod:`accord.protocol.secret_strength`)."""
    return weakness(value)


@dataclass(frozen=True)
class Starting:
    """The service being started: its name, and whether it calls other services."""

    name: str
    calls_others: bool
    keeps_push_configs: bool = False  # an A2A agent: callers' push credentials, encrypted


@dataclass(frozen=True)
class ProductionRule:
    """One thing production refuses: ``problem(settings, starting)`` says why, or None."""

    problem: Callable[[AccordSettings, Starting], str | None]


def _dev_aids(s: AccordSettings, _start: Starting) -> str | None:
    on = [env_name(n) for n in ("dev", "faults", "test_pause") if getattr(s, n)]
    return f"{', '.join(on)} (development and tests only)" if on else None


def _secret(s: AccordSettings, _start: Starting) -> str | None:
    if s.jwt_secret is None:
        return None
    why = placeholder_reason(s.jwt_secret.get_secret_value())
    return f"ACCORD_JWT_SECRET {why}" if why else None


def _verifier(s: AccordSettings, _start: Starting) -> str | None:
    if s.jwt_secret is None and s.jwks is None and s.jwt_public_key is None:
        return (
            "no way to verify people's tokens: set ACCORD_JWKS (an identity provider) or "
            "ACCORD_JWT_SECRET; production never makes one up"
        )
    return None


def _service_key(s: AccordSettings, start: Starting) -> str | None:
    if s.service_token_file is not None:
        return None  # its token comes from elsewhere; verifiers check it against their table
    ring = service_dir(start.name) / KEYRING_FILE
    if not ring.is_file():
        shared = (
            " (ACCORD_JWT_SECRET never signs service tokens: a secret every service holds "
            "would let any of them mint another's authority)"
            if s.jwt_secret is not None
            else ""
        )
        return (
            f"{start.name} has no signing key of its own at {ring}{shared}: provision one "
            f"with `accord keys rotate {start.name}` into ACCORD_KEYS_DIR (docs/service-keys.md)"
        )
    return shared_reason(ring, f"{start.name}'s key ring")


def _trust(s: AccordSettings, _start: Starting) -> str | None:
    if s.service_trust is None:
        return (
            "no ACCORD_SERVICE_TRUST: production names the services it accepts tokens from, "
            "their JWKS and grants (docs/service-keys.md)"
        )
    return None


def _api_keys(s: AccordSettings, _start: Starting) -> str | None:
    if s.api_keys is None or not s.api_keys.exists():
        return None
    shared = shared_reason(s.api_keys, "ACCORD_API_KEYS")
    if shared is not None:
        return shared
    weak = ApiKeys(s.api_keys).weak_entries()
    if weak:
        return f"ACCORD_API_KEYS holds guessable keys: {'; '.join(weak)}"
    return None


def _jwks_transport(s: AccordSettings, _start: Starting) -> str | None:
    if s.jwks is not None and s.jwks.startswith("http://"):
        return "ACCORD_JWKS must be an https:// URL (or a file)"
    return None


def _database(s: AccordSettings, _start: Starting) -> str | None:
    if s.database_url and re.search(r"replace[_-]?me", s.database_url, re.I):
        return "ACCORD_DATABASE_URL holds a placeholder password"
    return None


def _push_key(s: AccordSettings, start: Starting) -> str | None:
    if start.keeps_push_configs and s.push_secrets_key is None:
        return (
            f"no {PUSH_KEY_SETTING}: {start.name} encrypts its callers' push credentials with "
            "it, the same key on every replica (`openssl rand -base64 32`)"
        )
    return None


def _push_key_value(s: AccordSettings, start: Starting) -> str | None:
    if start.keeps_push_configs and s.push_secrets_key is not None:
        return key_problem(s.push_secrets_key.get_secret_value())
    return None


RULES: Final = (
    ProductionRule(_dev_aids),
    ProductionRule(_secret),
    ProductionRule(_verifier),
    ProductionRule(_service_key),
    ProductionRule(_trust),
    ProductionRule(_api_keys),
    ProductionRule(_jwks_transport),
    ProductionRule(_database),
    ProductionRule(_push_key),
    ProductionRule(_push_key_value),
)
"""Every refusal, one row each: a new one (an auth-off switch, say) is one more row."""


def refusals(settings: AccordSettings, starting: Starting) -> list[str]:
    """What production mode refuses in ``settings`` for ``starting`` (empty: it may start)."""
    return [why for rule in RULES if (why := rule.problem(settings, starting)) is not None]


def development_notice(
    settings: AccordSettings, starting: Starting, *, created: bool
) -> str | None:
    """The one WARNING line of a development start (None: nothing production would refuse)."""
    parts: list[str] = []
    if settings.jwt_secret is None:
        made = "generated now" if created else "generated earlier"
        parts.append(
            f"tokens are signed with the development secret {dev_secret_path()} ({made}), "
            "shared by every process using this data directory"
        )
    if starting.keeps_push_configs and settings.push_secrets_key is None:
        parts.append(f"push credentials are encrypted with the development key {dev_key_path()}")
    # The secret and key rules are met by the development secret and keys; the others are not.
    for rule in (_dev_aids, _secret, _api_keys, _jwks_transport, _database, _push_key_value):
        why = rule(settings, starting)
        if why is not None:
            parts.append(why)
    if not parts:
        return None
    return f"development mode (ACCORD_MODE=production would refuse to start): {'; '.join(parts)}"
