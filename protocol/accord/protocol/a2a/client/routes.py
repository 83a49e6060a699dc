"""GET an agent's extra JSON route (``/approvals``, ``/stats``) as an A2A client would.

The route sits behind the same gate as the A2A methods: the request carries the credential and
``A2A-Version``; an error answer is the contract error of its body (or of its HTTP status).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, VERSION_HEADER

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.client.wire import error_from_response


def a2a_headers(token: str) -> dict[str, str]:
    """The headers every authenticated A2A request carries."""
    return {VERSION_HEADER: PROTOCOL_VERSION_CURRENT, "Authorization": f"Bearer {token}"}


async def get_json(
    url: str, token: str, params: Mapping[str, Any] | None = None, *, timeout_s: float = 15.0
) -> Any:
    """The JSON body of ``GET url`` (None for an empty body); a contract error otherwise."""
    async with httpx.AsyncClient(timeout=timeout_s) as http:
        try:
            response = await http.get(url, headers=a2a_headers(token), params=params)
        except httpx.HTTPError:
            raise AccordError(ErrorCode.UNAVAILABLE, f"no answer from {url}") from None
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = None
    if response.status_code >= 400:
        raise error_from_response(response.status_code, body)
    return body
