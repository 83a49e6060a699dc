"""``accord serve NAME --auth none``: an A2A agent that admits callers without credentials.

For probing an agent on your own machine with standard A2A tooling that sends no credential
(an inspector, curl, the TCK). Such a request is served as :data:`ANONYMOUS`, a customer of the
default app: it owns the tasks it creates, like any customer, and sees no one else's. A request
that does carry a credential is verified as always (a wrong token is still 401).

It is refused, before anything binds a port:

- in production mode (``ACCORD_MODE=production``): a deployment never runs without
  authentication;
- on any interface but loopback (``127.0.0.0/8``, ``::1``, ``localhost``): nothing off this
  machine may reach an agent that lets anyone in;
- for tool servers (MCP): their tools act on orders and money for a verified principal only.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Final

from accord.contracts.keys import API_KEY_HEADER
from accord.protocol.auth.tokens import DEFAULT_APP, ROLE_CUSTOMER, Principal
from accord.protocol.auth.verify import Authenticator
from accord.protocol.settings import AccordSettings

AUTH_NONE: Final = "none"
AUTH_MODES: Final = ("token", AUTH_NONE)
ANONYMOUS: Final = Principal(
    subject="anonymous", roles=frozenset({ROLE_CUSTOMER}), app=DEFAULT_APP, credential_id="none"
)


def is_loopback_host(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def auth_none_refusal(settings: AccordSettings, host: str, protocol: str) -> str | None:
    """Why ``--auth none`` may not start here, or None."""
    if settings.mode == "production":
        return "--auth none is refused in production mode (ACCORD_MODE=production)"
    if protocol != "a2a":
        return "--auth none is for A2A agents only; tool servers always verify their caller"
    if not is_loopback_host(host):
        return (
            f"--auth none is refused on {host!r}: bind to loopback (127.0.0.1, ::1 or "
            "localhost) so nothing off this machine can reach an agent without authentication"
        )
    return None


class AnonymousAuthenticator(Authenticator):
    """A request without a credential is :data:`ANONYMOUS`; one with a credential is verified."""

    def authenticate(self, headers: Mapping[str, str]) -> Principal:
        if not headers.get("authorization") and not headers.get(API_KEY_HEADER.lower()):
            return ANONYMOUS
        return super().authenticate(headers)
