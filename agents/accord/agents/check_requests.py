"""What policy-check and risk-check do with a request before their rules run: validate the
skill input, check who is asking, and look the order up over MCP when the caller did not bring
its facts.

policy-check and risk-check run in parallel with the orchestrator's own order lookup, so they
gather the facts they need themselves (agents are autonomous; the orchestrator passes ids).
Each agent has one tool client for its process (:func:`check_tools`), connected only to the
server(s) that offer the tools it needs, so that an outage elsewhere (payments) cannot stop a
check.

Every tool call names the customer it is made for (a :class:`ToolDelegation` in the call's
``_meta``): the tool server takes the customer from it, and the agent's token (its own service
credential, granting only the tools it names) lets it act for that customer.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from accord.agents.permissions import Operation, require, require_customer
from accord.agents.refund.config import TOOLS_FILE
from accord.contracts.envelope import DelegationEnvelope, Tenant
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.served import ServedContracts, served_agent_contracts
from accord.contracts.tool_access import ToolDelegation
from accord.contracts.validation import first_broken
from accord.protocol.a2a.server.executor import Turn
from accord.protocol.auth import Principal
from accord.protocol.in_process import InProcessServers
from accord.protocol.mcp.client import ToolClient
from accord.protocol.mcp.config import load_config
from accord.protocol.service import StartRefusedError
from accord.protocol.settings import current

LOOKUP_TOOL: Final = "orders.lookup"
M = TypeVar("M", bound=BaseModel)


def check_tools(
    service: str, *tool_names: str, in_process: InProcessServers | None = None
) -> ToolClient:
    """The agent's tool client (not started): the configured servers (ACCORD_TOOLS_CONFIG or
    the default file) that offer any of ``tool_names``, with ``service``'s own token granting
    exactly ``tool_names``; ``in_process``: its ServeOptions' (the in-process Runner's)."""
    config = load_config(default=TOOLS_FILE).serving(*tool_names)
    return ToolClient.from_config(
        config=config, service=service, grants=tool_names, in_process=in_process
    )


def served_contracts(contract_name: str) -> ServedContracts:
    """The contract versions this agent process serves: ACCORD_CONTRACTS_DIR's files of its
    name, else the shipped one. Files that disagree (or a broken one) refuse the start with one
    line naming the reason (exit 2), like a bad setting."""
    folder = current().contracts_dir
    try:
        return served_agent_contracts(contract_name, folder)
    except AccordError as bad:
        raise StartRefusedError(f"ACCORD_CONTRACTS_DIR={folder}: {bad.message}") from None
    except ValueError as bad:
        raise StartRefusedError(f"ACCORD_CONTRACTS_DIR={folder}: {bad}") from None


def acting_for(turn: Turn, customer_id: str) -> ToolDelegation:
    """The delegation of a turn's tool calls: the customer the request is about (which
    :func:`check_subject` allowed this principal to ask about), in the app and session of the
    envelope (or of the principal, when an end user sent none)."""
    tenant = turn.envelope.tenant if turn.envelope is not None else None
    return ToolDelegation(
        tenant=Tenant(
            app=tenant.app if tenant is not None else turn.principal.app,
            user=customer_id,
            session=tenant.session if tenant is not None else turn.context_id,
        )
    )


async def call_tool(
    tools: ToolClient,
    tool: str,
    arguments: dict[str, Any],
    traceparent: str | None,
    delegation: ToolDelegation,
) -> dict[str, Any]:
    """``tools.call`` for the customer of ``delegation``; a tool no configured server offers is
    UNAVAILABLE here (the check cannot be made), not the client's NOT_FOUND, which a caller
    would read as "no such order"."""
    if tool not in tools.contracts:
        raise AccordError(ErrorCode.UNAVAILABLE, f"no configured tool server offers {tool}")
    return await tools.call(tool, arguments, traceparent=traceparent, acting_for=delegation)


async def lookup_order(
    tools: ToolClient,
    order_id: str,
    customer_id: str,
    traceparent: str | None,
    delegation: ToolDelegation,
) -> dict[str, Any]:
    """orders.lookup for the customer; another customer's order is NOT_FOUND."""
    return await call_tool(
        tools,
        LOOKUP_TOOL,
        {"order_id": order_id, "customer_id": customer_id},
        traceparent,
        delegation,
    )


def check_caller(principal: Principal) -> None:
    """Any check needs a grant (a customer, a service acting for one), even one that brings its
    own facts and reads nothing: every other role is PERMISSION_DENIED."""
    require(principal, Operation.CHECK_ORDER)


def check_subject(
    principal: Principal, customer_id: str, envelope: DelegationEnvelope | None
) -> None:
    """May ``principal`` read ``customer_id``'s orders? The allow-list of
    :mod:`accord.agents.permissions`: a customer their own, a service only the customer its
    delegation envelope names (anyone else's is NOT_FOUND), every other role nothing."""
    require_customer(principal, Operation.CHECK_ORDER, customer_id, envelope)


def parse_input(model: type[M], data: dict[str, Any]) -> M:
    """Validate a skill input with its pydantic model: INVALID_INPUT naming the field and rule
    (never pydantic's full text, which may echo the caller's values back)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        broken = first_broken(exc)
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            f"input field {broken.field!r}: {broken.message}",
            {"field": broken.field, "rule": broken.rule},
        ) from None
