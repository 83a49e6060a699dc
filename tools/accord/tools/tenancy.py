"""The tenant a tool call is answered for: (app, customer), both as the server verified them.

Orders, customers and money are kept per app: C-01 of app ``shop`` is not C-01 of the demo app,
and an order of another app is NOT_FOUND exactly like no order. The app is the verified
call's (:attr:`CallContext.app`: the delegation's tenant app, else the credential's; one the
server is configured for), never an argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accord.protocol.mcp.server import CallContext
from accord.tools._serving import verified_customer


@dataclass(frozen=True)
class TenantCustomer:
    """A customer of one tenant app."""

    app: str
    customer_id: str


def verified_tenant(args: dict[str, Any], ctx: CallContext) -> TenantCustomer:
    """The customer the server verified for this call, in the app it verified."""
    return TenantCustomer(ctx.app, verified_customer(args, ctx))
