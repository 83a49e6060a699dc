"""policy-check: the A2A agent that says whether a refund is allowed, and up to how much.

A thin adapter around the pure rules in :mod:`accord.agents.policy_rules`. The first turn
carries a DataPart with the skill input (order facts, reason, optional amount and evidence).
A damage claim without evidence stops in ``waiting(input)`` with a question; the caller answers
in the SAME task, with text (the description or photo reference) or a DataPart
``{"evidence": "..."}``, and the task completes with rule ``damage_with_evidence``.

The caller may pass the order facts, or only ``order_id`` and ``customer_id``: then
policy-check looks the order up itself (orders.lookup over MCP), so the orchestrator can run it
in parallel with its own lookup. The envelope's context refs are read as references to the
customer's evidence when the input names none (the contract's ``envelope.context_refs``). Who
may ask about which customer is the allow-list of
:mod:`accord.agents.permissions` (operation ``check.order``).
"""

from __future__ import annotations

from typing import Any, Final

from accord.agents.check_requests import (
    LOOKUP_TOOL,
    acting_for,
    check_caller,
    check_subject,
    check_tools,
    lookup_order,
    parse_input,
    served_contracts,
)
from accord.agents.policy_rules import (
    EvidenceNeeded,
    PolicyOrder,
    PolicyRequest,
    evaluate,
)
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
from accord.protocol.settings import ServeOptions
from accord.refund_contracts.orders import OrderFacts

CONTRACT_NAME: Final = "policy-check"
SERVICE_NAME: Final = "policy"
_REQUEST_KEY: Final = "request"  # Turn.state: the first turn's input, kept for the answer
_MAX_EVIDENCE: Final = 2000


class PolicyExecutor(ContractExecutor):
    def __init__(self, contract: AgentContract, tools: ToolClient, **options: Any) -> None:
        super().__init__(contract, **options)
        self.tools = tools

    async def run(self, turn: Turn, progress: Progress) -> Completed | NeedsInput:
        check_caller(turn.principal)
        request = self._request(turn)
        if request.order is None:
            request = await self._with_order(request, turn, progress)
        turn.state[_REQUEST_KEY] = request.model_dump(mode="json")
        order_id = request.order.order_id if request.order is not None else request.order_id
        await progress.update(f"checking the refund policy for order {order_id}", node="policy")
        outcome = evaluate(request)
        if isinstance(outcome, EvidenceNeeded):
            return NeedsInput(question=outcome.question)
        return Completed(data=outcome.model_dump(mode="json"), text=outcome.explanation)

    async def _with_order(
        self, request: PolicyRequest, turn: Turn, progress: Progress
    ) -> PolicyRequest:
        order_id, customer_id = request.order_id or "", request.customer_id or ""  # validated
        check_subject(turn.principal, customer_id, turn.envelope)
        await progress.update(f"looking up order {order_id}", node=LOOKUP_TOOL)
        traceparent = turn.envelope.traceparent if turn.envelope is not None else None
        found = await lookup_order(
            self.tools, order_id, customer_id, traceparent, acting_for(turn, customer_id)
        )
        # orders.lookup's answer, read with its one type; the policy reads a part of it.
        facts = OrderFacts.model_validate(found)
        return request.with_order(PolicyOrder.model_validate(facts.model_dump()))

    @staticmethod
    def _request(turn: Turn) -> PolicyRequest:
        if not turn.is_continuation:
            request = _parse(turn.data or {})
            refs = _referenced_evidence(turn)
            return request.with_evidence(refs) if refs and not request.evidence else request
        saved = turn.state.get(_REQUEST_KEY)
        if not isinstance(saved, dict):
            raise AccordError(
                ErrorCode.INVALID_INPUT,
                "this task has no refund request to "
                "continue; start a new task with the skill input",
            )
        request = _parse(saved)
        evidence = _evidence(turn)
        return request.with_evidence(evidence) if evidence else request


def _evidence(turn: Turn) -> str | None:
    """The answer to the evidence question: ``data.evidence`` if given, else the text."""
    raw: Any = (turn.data or {}).get("evidence")
    answer = raw if isinstance(raw, str) and raw.strip() else turn.text
    answer = answer.strip()
    return answer[:_MAX_EVIDENCE] if answer else None


def _referenced_evidence(turn: Turn) -> str | None:
    """The envelope's context refs, read as evidence references (this skill's contract says
    so, ENV-008): what a damage claim needs when its input names no evidence."""
    refs = [r.strip() for r in (turn.envelope.context_refs if turn.envelope else []) if r.strip()]
    joined = "; ".join(refs)
    return joined[:_MAX_EVIDENCE] if joined else None


def _parse(data: dict[str, Any]) -> PolicyRequest:
    return parse_input(PolicyRequest, data)


def build_app(options: ServeOptions) -> Any:
    # The versions this process serves: the shipped contract, or ACCORD_CONTRACTS_DIR's files.
    served = served_contracts(CONTRACT_NAME)
    contract = served.primary
    # The process's one tool client (commerce only), for requests that bring ids, not facts.
    tools = check_tools(SERVICE_NAME, LOOKUP_TOOL, in_process=options.in_process)
    return build_agent_app(
        contract,
        PolicyExecutor(contract, tools, served=served),
        options,
        service_name=SERVICE_NAME,
        lifespan_hooks=[tools.running],
    )


service = ServiceSpec(
    name=SERVICE_NAME,
    protocol="a2a",
    port=8701,  # the refund assistant's documented port (docs/refund-assistant.md)
    description="policy-check: is this refund allowed, and up to how much?",
    build_app=build_app,
    stores=lambda options: [
        task_store_ref(options, SERVICE_NAME),
        push_store_ref(options, SERVICE_NAME),
        send_keys_ref(options, SERVICE_NAME),
    ],
)
