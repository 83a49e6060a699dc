"""risk-check: the A2A agent that scores how risky a refund is.

It reads the customer's recent history over MCP (commerce tool server, through
:class:`accord.protocol.mcp.client.ToolClient`) and scores it with the pure rules in
:mod:`accord.agents.risk_rules`. When the caller names the amount (the orchestrator always
does), that is one call, ``orders.customer_history``: the history, answered only when the order
is the customer's. Without an amount the order's refundable rest is needed too, so
``orders.lookup`` runs beside it. A tools configuration whose commerce does not list
``orders.customer_history`` (written before it existed) gets the two calls of risk-check 1.0,
``orders.lookup`` and ``customers.history``. A tool failure is the task's failure with the
tool's contract code (UNAVAILABLE when commerce is down, NOT_FOUND for another customer's
order...).

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
from accord.protocol.a2a.server import (
    build_agent_app,
    push_store_ref,
    send_keys_ref,
    task_store_ref,
)
from accord.protocol.a2a.server.executor import (
    Completed,
    ContractExecutor,
    NeedsInput,
    Progress,
    Turn,
)
from accord.protocol.mcp.client import ToolClient
from accord.protocol.service import ServiceSpec
from accord.protocol.settings import ServeOptions, app_settings
from accord.refund_contracts.settings import AssistantSettings

CONTRACT_NAME: Final = "risk-check"
SERVICE_NAME: Final = "risk"
HISTORY_TOOL: Final = "customers.history"
ORDER_HISTORY_TOOL: Final = "orders.customer_history"
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
        # The history is given only for the customer's own order (another customer's order is
        # NOT_FOUND): that proof, made for the customer the envelope names, is what keeps a
        # service acting for C-04 from getting a verdict on C-01's order. orders.customer_history
        # gives both in one call; the refundable rest, needed only when the caller named no
        # amount, is orders.lookup's, read at the same time.
        one_call = ORDER_HISTORY_TOOL in self.tools.contracts
        look_up = request.amount_cents is None or not one_call
        # One note for the reads (they start together): a second note at the same moment would
        # be one more task save and streamed event that no client sees for long.
        if look_up:
            note = (
                f"looking up order {request.order_id} and the refund history of customer "
                f"{request.customer_id}"
            )
        else:
            note = (
                f"reading the refund history of customer {request.customer_id} for order "
                f"{request.order_id}"
            )
        await progress.update(note, node=LOOKUP_TOOL if look_up else ORDER_HISTORY_TOOL)
        if one_call:
            tool, arguments = ORDER_HISTORY_TOOL, {"order_id": request.order_id}
        else:
            tool, arguments = HISTORY_TOOL, {}
        arguments["customer_id"] = request.customer_id
        history_read = call_tool(self.tools, tool, arguments, traceparent, delegation)
        if not look_up:
            assert request.amount_cents is not None
            amount, raw = request.amount_cents, await history_read
        else:
            lookup = lookup_order(
                self.tools, request.order_id, request.customer_id, traceparent, delegation
            )
            both: tuple[dict[str, Any] | BaseException, dict[str, Any] | BaseException]
            both = await asyncio.gather(lookup, history_read, return_exceptions=True)
            looked_up, read = both
            # The lookup's failure first (NOT_FOUND: not this customer's order), then the
            # history's.
            for outcome in (looked_up, read):
                if isinstance(outcome, BaseException):
                    raise outcome
            assert isinstance(looked_up, dict)
            assert isinstance(read, dict)
            amount = (
                request.amount_cents
                if request.amount_cents is not None
                else int(looked_up["refundable_cents"])
            )
            raw = read
        try:
            history = CustomerHistory.model_validate(raw)
        except ValidationError:
            raise AccordError(
                ErrorCode.CONTRACT_VIOLATION, "the history tool answered outside its contract"
            ) from None
        result = assess(amount, history, app_settings(AssistantSettings).approval_threshold_cents)
        why = ", ".join(s.value for s in result.signals) or "no risk signals"
        text = f"Refund risk for order {request.order_id}: {result.risk.value} ({why})."
        return Completed(data=result.model_dump(mode="json"), text=text)


def _parse(data: dict[str, Any]) -> RiskRequest:
    return parse_input(RiskRequest, data)


def build_app(options: ServeOptions) -> Any:
    # The versions this process serves: the shipped contract, or ACCORD_CONTRACTS_DIR's files.
    served = served_contracts(CONTRACT_NAME)
    contract = served.primary
    tools = check_tools(
        SERVICE_NAME, ORDER_HISTORY_TOOL, HISTORY_TOOL, LOOKUP_TOOL, in_process=options.in_process
    )
    # A turn is priced at its most tool calls (lookup + history: no amount, or an older tools
    # configuration); with the amount it makes one.
    executor = RiskExecutor(contract, tools, tool_calls_per_turn=2, served=served)

    async def commerce_ready() -> bool:
        """Commerce (every configuration of it serves orders.lookup) is connected and passed its
        contract check. Waits only for an attempt in flight (just after start), never opens a
        session."""
        return await tools.ready(LOOKUP_TOOL, wait_s=READY_TIMEOUT_S)

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
    port=8702,  # the refund assistant's documented port (docs/refund-assistant.md)
    description="risk-check: how risky is this refund? (reads orders.customer_history over MCP)",
    build_app=build_app,
    stores=lambda options: [
        task_store_ref(options, SERVICE_NAME),
        push_store_ref(options, SERVICE_NAME),
        send_keys_ref(options, SERVICE_NAME),
    ],
)
