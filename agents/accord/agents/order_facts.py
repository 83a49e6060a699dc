"""Order facts for the checking agents, read over MCP when the caller did not bring them.

policy-check and risk-check run in parallel with the orchestrator's own order lookup, so they
gather the facts they need themselves (agents are autonomous; the orchestrator passes ids).
Each agent opens a tool client only for the server(s) that offer the tools it needs, so that an
outage elsewhere (payments) cannot stop a check.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import ROLE_CUSTOMER, Principal
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import load_config

LOOKUP_TOOL: Final = "orders.lookup"
M = TypeVar("M", bound=BaseModel)


def tools_for(*tool_names: str) -> ToolClient:
    """A tool client for the configured servers (ACCORD_TOOLS_CONFIG or the default file) that
    offer any of ``tool_names``."""
    config = load_config()
    wanted = set(tool_names)
    servers = [s for s in config.servers if any(c.name in wanted for c in s.contracts)]
    if not servers:
        raise AccordError(
            ErrorCode.UNAVAILABLE, f"no configured tool server offers {', '.join(tool_names)}"
        )
    return ToolClient(
        servers,
        timeout_s=config.timeout_s,
        connect_timeout_s=config.connect_timeout_s,
        retry=config.retry,
    )


async def lookup_order(
    tools: ToolClient, order_id: str, customer_id: str, traceparent: str | None
) -> dict[str, Any]:
    """orders.lookup for the customer; another customer's order is NOT_FOUND."""
    return await tools.call(
        LOOKUP_TOOL, {"order_id": order_id, "customer_id": customer_id}, traceparent=traceparent
    )


def check_subject(principal: Principal, customer_id: str) -> None:
    """A customer may ask about their own orders only; services and approvers about anyone."""
    if principal.roles <= {ROLE_CUSTOMER} and principal.subject != customer_id:
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            "a customer may only check their own orders",
            {"field": "customer_id"},
        )


def parse_input(model: type[M], data: dict[str, Any]) -> M:
    """Validate a skill input with its pydantic model: INVALID_INPUT naming the field and rule
    (never pydantic's full text, which may echo the caller's values back)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"input field {field!r}: {first['msg']}",
            {"field": field, "rule": first["type"]},
        ) from None
