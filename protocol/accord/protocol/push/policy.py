"""Where an agent may send a push notification: the server-side request forgery guard.

A push URL is chosen by the caller, and the agent POSTs to it: without a guard any caller could
make the agent reach its own network (a metadata service, an admin port). The rules, checked
when a config is created and again before every delivery (a name may resolve elsewhere by then:
DNS rebinding):

- production and by default: ``https`` only, to a host on ``ACCORD_PUSH_ALLOWED_HOSTS``
  (``name`` or ``*.domain``), and every address the host resolves to must be public;
- development (``ACCORD_DEV=1``, never with ``ACCORD_MODE=production``): loopback hosts
  (``127.0.0.0/8``, ``::1``, ``localhost``) are allowed without listing, over ``http`` too, and
  a listed host may resolve to a private address.

The request then goes to the address that was checked (:func:`pinned`), not to a second
resolution of the name: TLS still verifies the certificate against the host name (SNI), so a
name that resolves elsewhere between the check and the connection cannot steer the request.
Redirects are never followed (delivery.py), so a checked URL cannot forward the request on.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import urllib.parse
from dataclasses import dataclass
from typing import Final

from accord.protocol.settings import AccordSettings, current

LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost.localdomain"})
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class PushUrlRefusedError(ValueError):
    """The URL may not receive notifications; the message says why (shown to the caller)."""


def _public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def _host_listed(host: str, allowed: tuple[str, ...]) -> bool:
    for pattern in allowed:
        pattern = pattern.lower().rstrip(".")
        if pattern.startswith("*.") and host.endswith(pattern[1:]) and host != pattern[2:]:
            return True
        if host == pattern:
            return True
    return False


@dataclass(frozen=True)
class PushUrlPolicy:
    allowed_hosts: tuple[str, ...] = ()
    development: bool = False

    @classmethod
    def from_settings(cls, settings: AccordSettings | None = None) -> PushUrlPolicy:
        s = settings or current()
        return cls(
            allowed_hosts=s.push_allowed_hosts,
            development=s.dev and s.mode != "production",
        )

    async def check(self, url: str) -> list[IPAddress]:
        """The addresses ``url`` may be reached at; :class:`PushUrlRefusedError` if none may."""
        try:
            parsed = urllib.parse.urlsplit(url)
            port = parsed.port
        except ValueError as exc:
            raise PushUrlRefusedError("the push URL cannot be parsed") from exc
        host = (parsed.hostname or "").lower().rstrip(".")
        if not host:
            raise PushUrlRefusedError("the push URL names no host")
        if parsed.username or parsed.password:
            raise PushUrlRefusedError("the push URL may not carry credentials")
        addresses = await _resolve(host, port or (443 if parsed.scheme == "https" else 80))
        loopback = bool(addresses) and all(a.is_loopback for a in addresses)
        dev_loopback = self.development and loopback and (_literal(host) or host in LOOPBACK_NAMES)
        if parsed.scheme != "https" and not (parsed.scheme == "http" and dev_loopback):
            raise PushUrlRefusedError(
                "push URLs must be https (http only to loopback, in development mode)"
            )
        if not dev_loopback and not _host_listed(host, self.allowed_hosts):
            raise PushUrlRefusedError(f"host {host!r} is not on ACCORD_PUSH_ALLOWED_HOSTS")
        if not addresses:
            raise PushUrlRefusedError(f"host {host!r} does not resolve")
        if not self.development and not all(_public(a) for a in addresses):
            raise PushUrlRefusedError(
                f"host {host!r} resolves to a private or loopback address "
                "(allowed only in development mode, ACCORD_DEV=1)"
            )
        return addresses


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


@dataclass(frozen=True, slots=True)
class PinnedRequest:
    """A request to one checked address: the URL names the address, ``Host`` and the TLS
    server name (SNI, which the certificate is verified against) the original host."""

    url: str
    host_header: str
    extensions: dict[str, str]


def pinned(url: str, address: IPAddress) -> PinnedRequest:
    parsed = urllib.parse.urlsplit(url)
    host = parsed.hostname or ""
    literal = f"[{address}]" if isinstance(address, ipaddress.IPv6Address) else str(address)
    netloc = literal + (f":{parsed.port}" if parsed.port else "")
    target = urllib.parse.urlunsplit(parsed._replace(netloc=netloc))
    extensions = {"sni_hostname": host} if parsed.scheme == "https" and not _literal(host) else {}
    return PinnedRequest(target, parsed.netloc, extensions)
