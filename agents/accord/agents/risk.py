"""risk-check: the A2A agent that scores how risky a refund is.

It reads the customer's recent history with the MCP tool ``customers.history`` (commerce tool
server, through :class:`accord.protocol.mcp.client.ToolClient`) and scores it with the pure
rules in :mod:`accord.agents.risk_rules`. A tool failure is the task's failure with the tool's
contract code (UNAVAILABLE when commerce is down, NOT_FOUND for an unknown customer...).

The service has one tool client for its process, started and closed by its lifespan: the
commerce server is connected, listed and contract-checked once, not per turn. ``/readyz``
reports that client's state (connected and checked), without opening a session of its own.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from pydantic import ValidationError

from accord.agents.check_requests import (
    LOOKUP_TOOL,
    acting_for,
    call_tool,
    check_subject,
    check_tools,
    lookup_order,
    parse_input,
    served_contracts,
)
from accord.agents.risk_rules import CustomerHistory, RiskRequest, assess
from accord.contracts.agents import AgentContract
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.a2a.executor import Completed, ContractExecutor, NeedsInput, Progress, Turn
from accord.protocol.a2a.server import build_agent_app, push_store_ref, task_store_ref
from accord.protocol.mcp.client import ToolClient
from accord.protocol.service import ServiceSpec
from accord.protocol.settings import ServeOptions

CONTRACT_NAME: Final = "risk-check"
SERVICE_NAME: Final = "risk"
HISTORY_TOOL: Final = "customers.history"
READY_TIMEOUT_S: Final = 3.0


class RiskExecutor(ContractExecutor):
    def __init__(self, contract: AgentContract, tools: ToolClient, **options: Any) -> None:
        super().__init__(contract, **options)
        self.tools = tools

    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        request = _parse(turn.data or {})
        check_subject(turn.principal, request.customer_id, turn.envelope)
        traceparent = turn.envelope.traceparent if turn.envelope is not None else None
        delegation = acting_for(turn, request.customer_id)
        # The order is looked up even when the caller brought the amount: the lookup, made
        # for the customer the envelope names, is what proves the order is theirs (another
        # customer's order is NOT_FOUND), so a service acting for C-04 never gets a verdict
        # on C-01's order.
        # The history is read at the same time (one round trip, not two): it is the history of
        # the customer the delegation names (check_subject above), and no verdict leaves this
        # task unless the lookup found the order.
        # One note for both reads (they start together): a second note at the same moment
        # would be one more task save and streamed event that no client sees for long.
        await progress.update(
            f"looking up order {request.order_id} and the refund history of customer "
            f"{request.customer_id}",
            node=LOOKUP_TOOL,
        )
        both: tuple[dict[str, Any] | BaseException, dict[str, Any] | BaseException]
        both = await asyncio.gather(
            lookup_order(
                self.tools, request.order_id, request.customer_id, traceparent, delegation
            ),
            call_tool(
                self.tools,
                HISTORY_TOOL,
                {"customer_id": request.customer_id},
                traceparent,
                delegation,
            ),
            return_exceptions=True,
        )
        looked_up, read = both
        # The lookup's failure first (NOT_FOUND: not this customer's order), then the history's.
        if isinstance(looked_up, BaseException):
            raise looked_up
        if isinstance(read, BaseException):
            raise read
        order, raw = looked_up, read
        amount = (
            request.amount_cents
            if request.amount_cents is not None
            else int(order["refundable_cents"])
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


def build_app(options: ServeOptions) -> Any:
    # The versions this process serves: the shipped contract, or ACCORD_CONTRACTS_DIR's files.
    served = served_contracts(CONTRACT_NAME)
    contract = served.primary
    tools = check_tools(SERVICE_NAME, HISTORY_TOOL, LOOKUP_TOOL)
    # Two tool calls per turn: lookup + history.
    executor = RiskExecutor(contract, tools, tool_calls_per_turn=2, served=served)

    async def commerce_ready() -> bool:
        """The history tool's server is connected and passed its contract check. Waits only
        for an attempt in flight (just after start), never opens a session."""
        return await tools.ready(HISTORY_TOOL, wait_s=READY_TIMEOUT_S)

    return build_agent_app(
        contract,
        executor,
        options,
        service_name=SERVICE_NAME,
        readiness=commerce_ready,
        lifespan_hooks=[tools.running],
    )


service = ServiceSpec(
    name=SERVICE_NAME,
    protocol="a2a",
    description="risk-check: how risky is this refund? (reads customers.history over MCP)",
    build_app=build_app,
    stores=lambda options: [
        task_store_ref(options, SERVICE_NAME),
        push_store_ref(options, SERVICE_NAME),
    ],
)
