"""Credentials go only where they were configured: the origin rule of every A2A client.

An Agent Card names the URLs to talk to (``supportedInterfaces``), and anyone who can serve a
card can name any host there. A client that followed the card would send its bearer token or
API key (and the customer's delegation envelope) to that host, which could replay it. So a
client sends requests only to the *origin* (scheme, host, port: RFC 6454) of the URL it was
given; a card whose chosen interface points at another origin is refused with
:class:`ForeignOriginError` before anything is sent. Redirects are not followed either (httpx
does not by default, and no Accord client turns that on).

The one opt-in is ``ACCORD_TRUSTED_ORIGINS``: a comma-separated list of origins a card may
point at besides its own (an agent whose card is served by a CDN on another host, say).
Listing an origin there means trusting it with the credentials of every Accord client in the
process.
"""

from __future__ import annotations

from typing import Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.origins import Origin as Origin
from accord.contracts.origins import origin_of as origin_of
from accord.protocol.settings import current, env_name

TRUSTED_SETTING: Final = env_name("trusted_origins")


class ForeignOriginError(AccordError):
    """A card points its interface at another origin than the one the client was given."""

    def __init__(self, given: Origin, named: Origin, agent: str) -> None:
        super().__init__(
            ErrorCode.PERMISSION_DENIED,
            f"agent card of {agent!r} at {given} points its interface at another origin, "
            f"{named}: refused, no credential was sent (to trust that origin, list it in "
            f"{TRUSTED_SETTING})",
            {
                "card_origin": str(given),
                "interface_origin": str(named),
                "setting": TRUSTED_SETTING,
            },
        )
        self.given = given
        self.named = named


def trusted_origins() -> frozenset[Origin]:
    """The origins ``ACCORD_TRUSTED_ORIGINS`` lists (validated when the settings are read)."""
    return frozenset(origin_of(o) for o in current().trusted_origins)


def check_origin(given_url: str, target_url: str, *, agent: str = "") -> None:
    """``target_url`` (an interface of the card found at ``given_url``) has the origin of
    ``given_url``, or a trusted one; :class:`ForeignOriginError` otherwise."""
    given, named = origin_of(given_url), origin_of(target_url)
    if named != given and named not in trusted_origins():
        raise ForeignOriginError(given, named, agent or "agent")
