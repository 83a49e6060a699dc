"""Which web pages may call an agent from a browser: the CORS rule, kept as tight as it goes.

A browser page on another origin than the agent (the web console, docs/console.md) can call the
A2A API only if the agent answers CORS preflights for that origin. The rule here allows:

- exactly the origins given (e.g. one: ``ACCORD_CONSOLE_URL``); no wildcard,
  no pattern, no ``null``;
- the methods and request headers the public API uses (``GET``, ``POST``; ``Authorization``,
  ``Content-Type``, ``A2A-Version``);
- no credentials mode: the browser never attaches cookies or HTTP auth it holds, so a page can
  only act with a bearer token it was handed, and there is nothing ambient to forge (CSRF).

Everything behind it is unchanged: the gate verifies the token of every call as for any client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from a2a.utils.constants import VERSION_HEADER
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from accord.protocol.a2a.origins import origin_of

ALLOWED_METHODS: Final = ("GET", "POST")
ALLOWED_HEADERS: Final = ("Authorization", "Content-Type", VERSION_HEADER)
EXPOSED_HEADERS: Final = ("Retry-After",)  # RATE_LIMITED answers say when to come back
PREFLIGHT_MAX_AGE_S: Final = 600


def browser_cors(origins: Sequence[str]) -> Middleware:
    """CORS for exactly ``origins`` (each normalised to ``scheme://host:port``, as a browser
    sends it in ``Origin``: the default port left out)."""
    allowed = sorted({_as_sent(o) for o in origins})
    return Middleware(
        CORSMiddleware,
        allow_origins=allowed,
        allow_methods=list(ALLOWED_METHODS),
        allow_headers=list(ALLOWED_HEADERS),
        expose_headers=list(EXPOSED_HEADERS),
        allow_credentials=False,
        max_age=PREFLIGHT_MAX_AGE_S,
    )


def _as_sent(origin: str) -> str:
    """The ``Origin`` header a browser sends for ``origin``: lower case, no default port."""
    parsed = origin_of(origin)
    default = {"http": 80, "https": 443}[parsed.scheme]
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    port = "" if parsed.port == default else f":{parsed.port}"
    return f"{parsed.scheme}://{host}{port}"
