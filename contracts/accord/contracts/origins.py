"""The origin (scheme, host, port: RFC 6454) of an http(s) URL: what a client compares before
it sends a credential where a card points (accord.protocol.a2a.origins, the contract test kit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from accord.contracts.errors import AccordError, ErrorCode

DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def origin_of(url: str) -> Origin:
    """The origin of an http(s) URL (scheme and host lowercased, the default port filled in);
    INVALID_INPUT for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise AccordError(ErrorCode.INVALID_INPUT, f"not a URL: {url!r}", {"url": url}) from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise AccordError(ErrorCode.INVALID_INPUT, f"not an http(s) URL: {url!r}", {"url": url})
    return Origin(scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme])
