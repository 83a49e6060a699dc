"""What a tool client presents to its HTTP tool servers, and only to them.

One :class:`ToolCredential` per :class:`~accord.protocol.mcp.client.ToolClient`: a service's
own token (:class:`ServiceCredential`, role ``service``, the tools of its configuration as
grants, renewed at half life) or a person's (:class:`StaticCredential`, the CLI's ``--token`` /
``--api-key``). :class:`OriginAuth` attaches it to a request only when the request goes to the
origin (scheme, host, port) of the URL the server was configured with, so a redirect or a
changed URL never carries it elsewhere. stdio servers get none: they trust their parent.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Mapping
from typing import Final, Protocol

import httpx2

from accord.contracts.keys import API_KEY_HEADER
from accord.protocol.auth import service_token
from accord.protocol.in_process import origin_of

TOKEN_TTL_S: Final = 3600
RENEW_AFTER_S: Final = TOKEN_TTL_S / 2


class ToolCredential(Protocol):
    """The headers that authenticate this process to a tool server."""

    def headers(self) -> Mapping[str, str]: ...


class StaticCredential:
    """A bearer token or an API key given by a person (the CLI's options)."""

    def __init__(self, *, token: str | None = None, api_key: str | None = None) -> None:
        if not token and not api_key:
            raise ValueError("a credential needs a token or an API key")
        self._headers = (
            {"Authorization": f"Bearer {token}"} if token else {API_KEY_HEADER: str(api_key)}
        )

    def headers(self) -> Mapping[str, str]:
        return self._headers


class ServiceCredential:
    """The service's own token (``svc:<name>``) granting exactly ``grants``; minted by the one
    function that makes service tokens (:func:`accord.protocol.auth.service_token`)."""

    def __init__(self, service: str, grants: Iterable[str]) -> None:
        self.service = service
        self.grants = tuple(sorted(set(grants)))
        self._token = ""
        self._minted_at = 0.0

    def headers(self) -> Mapping[str, str]:
        now = time.monotonic()
        if not self._token or now - self._minted_at > RENEW_AFTER_S:
            self._token = service_token(self.service, ttl_s=TOKEN_TTL_S, scopes=self.grants)
            self._minted_at = now
        return {"Authorization": f"Bearer {self._token}"}


class OriginAuth(httpx2.Auth):
    """httpx2 auth flow: the credential on requests to ``url``'s origin, nothing elsewhere."""

    def __init__(self, credential: ToolCredential, url: str) -> None:
        self._credential = credential
        self._origin = origin_of(url)

    def auth_flow(
        self, request: httpx2.Request
    ) -> Generator[httpx2.Request, httpx2.Response, None]:
        if origin_of(str(request.url)) == self._origin:
            request.headers.update(self._credential.headers())
        yield request
