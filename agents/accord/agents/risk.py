"""risk-check: the A2A agent that scores how risky a refund is.

It reads the customer's recent history with the MCP tool ``customers.history`` (commerce tool
server, through :class:`accord.protocol.mcp.client.ToolClient`) and scores it with the pure
rules in :mod:`accord.agents.risk_rules`. A tool failure is the task's failure with the tool's
contract code (UNAVAILABLE when commerce is down, NOT_FOUND for an unknown customer...).

Each turn opens its own tool client: the MCP client's sessions live in a task group that must be
entered and left by the same task, and a risk check is one call. ``/readyz`` reports whether the
commerce server can be connected to and passes its contract check.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from pydantic import ValidationError

from accord.agents.order_facts import (
    LOOKUP_TOOL,
    check_subject,
    lookup_order,
    parse_input,
    tools_for,
)
from accord.agents.risk_rules import CustomerHistory, RiskRequest, assess
from accord.contracts.agents import agent_contract
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.executor import Completed, ContractExecutor, NeedsInput, Progress, Turn
from accord.protocol.a2a.server import build_agent_app, task_store_ref
from accord.protocol.mcp.client import ToolClient
from accord.protocol.service import ServiceSpec
from accord.protocol.settings import ServeOptions

CONTRACT_NAME: Final = "risk-check"
SERVICE_NAME: Final = "risk"
HISTORY_TOOL: Final = "customers.history"
READY_TIMEOUT_S: Final = 3.0


def history_tools() -> ToolClient:
    """A tool client for the server(s) offering customers.history, for readiness."""
    return tools_for(HISTORY_TOOL)


class RiskExecutor(ContractExecutor):
    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        request = _parse(turn.data or {})
        check_subject(turn.principal, request.customer_id)
        traceparent = turn.envelope.traceparent if turn.envelope is not None else None
        amount = request.amount_cents
        async with tools_for(HISTORY_TOOL, LOOKUP_TOOL) as tools:
            if amount is None:
                await progress.update(f"looking up order {request.order_id}", node=LOOKUP_TOOL)
                order = await lookup_order(
                    tools, request.order_id, request.customer_id, traceparent
                )
                amount = int(order["refundable_cents"])
            await progress.update(
                f"reading the refund history of customer {request.customer_id}",
                node=HISTORY_TOOL,
            )
            raw = await tools.call(
                HISTORY_TOOL, {"customer_id": request.customer_id}, traceparent=traceparent
            )
        try:
            history = CustomerHistory.model_validate(raw)
        except ValidationError:
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION, f"{HISTORY_TOOL} answered outside its contract"
            ) from None
        result = assess(amount, history)
        why = ", ".join(s.value for s in result.signals) or "no risk signals"
        text = f"Refund risk for order {request.order_id}: {result.risk.value} ({why})."
        return Completed(data=result.model_dump(mode="json"), text=text)


def _parse(data: dict[str, Any]) -> RiskRequest:
    return parse_input(RiskRequest, data)


async def commerce_ready() -> bool:
    """Readiness: the history tool's server connects and passes its contract check."""
    try:
        async with asyncio.timeout(READY_TIMEOUT_S), history_tools():
            return True
    except (AccordError, TimeoutError):
        return False


def build_app(options: ServeOptions) -> Any:
    contract = agent_contract(CONTRACT_NAME)
    executor = RiskExecutor(contract, tool_calls_per_turn=1)
    return build_agent_app(
        contract, executor, options, service_name=SERVICE_NAME, readiness=commerce_ready
    )


service = ServiceSpec(
    name=SERVICE_NAME,
    protocol="a2a",
    description="risk-check: how risky is this refund? (reads customers.history over MCP)",
    build_app=build_app,
    stores=lambda options: [task_store_ref(options, SERVICE_NAME)],
)
