"""Where the kit sends its credential: only to the origin of the URL it was given, or to one
that ``ACCORD_TRUSTED_ORIGINS`` lists, the rule every Accord client follows
(docs/security-a2a.md). The kit reads that variable itself, since it runs without
accord.protocol's settings (a team that installs only the kit has none)."""

from __future__ import annotations

import os
from typing import Final

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.origins import Origin, origin_of

TRUSTED_ENV: Final = "ACCORD_TRUSTED_ORIGINS"


def trusted_origins() -> frozenset[Origin]:
    """The comma-separated origins of ``ACCORD_TRUSTED_ORIGINS`` (INVALID_INPUT for a bad one)."""
    listed = os.environ.get(TRUSTED_ENV, "")
    return frozenset(origin_of(o) for o in listed.split(",") if o.strip())


def check_origin(given_url: str, target_url: str) -> None:
    """PERMISSION_DENIED when ``target_url`` (an interface of the card found at ``given_url``)
    is at neither the origin of ``given_url`` nor a trusted one: nothing is sent there."""
    given, named = origin_of(given_url), origin_of(target_url)
    if named != given and named not in trusted_origins():
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            f"the agent card at {given} points its interface at another origin, {named}: "
            f"refused, no credential was sent (to trust that origin, list it in {TRUSTED_ENV})",
            {"card_origin": str(given), "interface_origin": str(named), "setting": TRUSTED_ENV},
        )
