"""HTTP edges of a tool server: the Host header allow-list (the request checks are in
_server_requests.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mcp.server.transport_security import TransportSecuritySettings

LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


def transport_security(host: str, allowed_hosts: Sequence[str] | None) -> TransportSecuritySettings:
    """DNS-rebinding protection: loopback patterns by default on a loopback bind.

    Bound to another interface (a container's 0.0.0.0) the check is off unless hosts are given,
    because the name clients use (a service name, a proxy) is not knowable here.
    """
    if allowed_hosts is None:
        if host not in LOOPBACK:
            return TransportSecuritySettings(enable_dns_rebinding_protection=False)
        allowed_hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    hosts = list(allowed_hosts)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # A bare name also matches it with any port, as clients send "host:port".
    patterns = sorted({p for h in hosts for p in ((h,) if ":" in h else (h, f"{h}:*"))})
    origins = [f"{scheme}://{p}" for p in patterns for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=patterns, allowed_origins=origins
    )
