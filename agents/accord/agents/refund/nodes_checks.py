"""The three checks that run in parallel after intake: order (MCP), policy and risk (A2A).

A check that finds no such order (another customer's, or a typo) answers `NotFound` instead
of failing, so that ``decide`` can explain it to the customer. policy-check may answer
``waiting(input)`` (a damage claim needs evidence): the question goes up to the customer as this
workflow's own INPUT interrupt, and the answer goes back into the SAME child task.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final, TypeVar

from accord.agents.models.messages import say
from accord.agents.refund.budget import RequestBudget, child_grant
from accord.agents.refund.facts import WorkflowInput, answer_text, asked_payload
from accord.agents.refund.money import requested_cents
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.outputs import (
    NotFound,
    OrderFound,
    OrderNotFound,
    PolicyVerdict,
    RiskVerdict,
    Understood,
    Upstream,
    from_peer,
)
from accord.agents.refund.pause_points import pause
from accord.agents.refund.peers import PEER_CONTRACTS, child_envelope
from accord.agents.refund.reported_errors import reported_by, reported_errors
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import Status, WaitingReason
from accord.protocol.a2a.client import A2AClient, TaskView
from accord.protocol.a2a.spent_report import NOTHING, Spent, checked_spent
from accord.protocol.sent import never_sent
from accord.refund_contracts.orders import OrderFacts
from accord.runtime.workflow import NodeContext

ORDER_TOOL: Final = "orders.lookup"
POLICY_SKILL: Final = "refund.policy"
RISK_SKILL: Final = "refund.risk"
POLICY_AGENT: Final = PEER_CONTRACTS["policy"]
RISK_AGENT: Final = PEER_CONTRACTS["risk"]
CHILD_KEY: Final = "child_task_id"  # NodeContext.state: the child task the attempt waits on
GRANT_KEY: Final = "child_grant"  # the question's payload: the (units, tool calls) granted
POLL_S: Final = (0.05, 1.0)
# Both input forms are in the agents' contracts: order facts, or order_id + customer_id for
# the agent to look up itself. policy-check and risk-check 1.0 implement only the facts form,
# so the checks send the facts they looked up (one shared orders.lookup per workflow).
SEND_ORDER_FACTS: Final = True
V = TypeVar("V", PolicyVerdict, RiskVerdict)


def _facts(ctx: NodeContext) -> tuple[WorkflowInput, Understood]:
    return WorkflowInput.model_validate(ctx.input), Upstream(ctx.outputs).intake()


async def lookup(deps: Deps, ctx: NodeContext) -> OrderFacts | None:
    """orders.lookup for the customer (None: no such order of theirs). Concurrent callers of
    one workflow share one call."""
    inp, asked = _facts(ctx)
    key = (ctx.workflow_id, asked.order_id)
    call = deps.lookups.get(key)
    if call is None:
        call = asyncio.ensure_future(
            deps.call_tool(
                ctx,
                ORDER_TOOL,
                {"order_id": asked.order_id, "customer_id": inp.customer_id},
                traceparent=inp.traceparent,
                acting_for=deps.acting_for(inp),
            )
        )
        deps.lookups[key] = call

        def settled(done: asyncio.Future[dict[str, Any]]) -> None:
            deps.lookups.pop(key, None)
            if not done.cancelled():
                # Read here: when every waiter was canceled (a graceful stop), the call's own
                # failure (UNAVAILABLE: the tool client closed) was logged as never retrieved.
                done.exception()

        call.add_done_callback(settled)
    try:
        found = await asyncio.shield(call)
    except AccordError as error:
        if error.code is ErrorCode.NOT_FOUND:
            return None
        raise
    return from_peer(OrderFacts, found, ORDER_TOOL)


async def order(deps: Deps, ctx: NodeContext) -> OrderFound | OrderNotFound:
    found = await lookup(deps, ctx)
    order_id = Upstream(ctx.outputs).intake().order_id
    if found is None:
        return OrderNotFound(order_id=order_id)
    return OrderFound.model_validate(found.model_dump())


async def policy(deps: Deps, ctx: NodeContext) -> PolicyVerdict | NotFound:
    inp, asked = _facts(ctx)
    with reported_errors(POLICY_AGENT):
        agent = await deps.peers.client("policy")
    # Answers already recorded: replay them in order (they return at once), then deliver the
    # newest one to the child task, unless a previous attempt delivered it before a crash.
    replayed = [ctx.interrupt(WaitingReason.INPUT) for _ in range(len(ctx.answers))]
    remember = _remembering(ctx)
    if not replayed:
        data: dict[str, Any] = {"reason": asked.reason.value if asked.reason else "other"}
        if SEND_ORDER_FACTS:
            facts = await lookup(deps, ctx)
            if facts is None:
                return NotFound()
            data["order"] = facts.model_dump(mode="json", exclude={"refunds"})
            requested = requested_cents(asked.amount, facts.refundable_cents)
            if requested is not None:  # the amount the customer named (policy rule 6)
                data["requested_cents"] = requested
        else:
            data.update(order_id=asked.order_id, customer_id=inp.customer_id)
        if asked.evidence:
            data["evidence"] = asked.evidence
        budget = RequestBudget(inp, ctx)
        grant = budget.grant("policy-check")
        envelope = child_envelope(
            inp,
            ctx.workflow_id,
            f"refund policy for {asked.order_id}",
            grant,
            child=f"{POLICY_AGENT}/{POLICY_SKILL}",
        )
        async with _child_turn(POLICY_AGENT, budget, grant):
            view = await agent.send(
                data=data, envelope=envelope, skill=POLICY_SKILL, on_update=remember
            )
        granted = grant
        await _settle(budget, agent, view, POLICY_AGENT, granted=granted, reserved=grant)
    else:
        latest = replayed[-1].value
        asked_before = asked_payload(latest)
        child = str(asked_before.get(CHILD_KEY) or "")
        with reported_errors(POLICY_AGENT):
            view = await agent.get(child)
        await remember(view)
        # The grant this workflow gave the child (kept with the question; a workflow that
        # waited before it was kept reads the child's stored envelope:
        # compat.WORKFLOW_CHILD_GRANT_FROM_ENVELOPE).
        granted = _grant_of(asked_before) or child_grant(view.metadata)
        if view.status is Status.WAITING:
            # The follow-up turn runs under the child's first envelope: reserve what is left
            # of its grant, then keep what this turn spent.
            budget = RequestBudget(inp, ctx)
            before = checked_spent(view.metadata, grant=granted, agent=POLICY_AGENT, worked=True)
            reserved = budget.reserve(granted[0] - before[0], granted[1] - before[1])
            async with _child_turn(POLICY_AGENT, budget, reserved):
                view = await agent.send(
                    text=answer_text(latest) or "-", task=view, on_update=remember
                )
            await _settle(
                budget, agent, view, POLICY_AGENT, granted=granted, reserved=reserved, before=before
            )
        view = await _settled(agent, view, POLICY_AGENT)
    while view.status is Status.WAITING:
        if view.waiting_reason is not WaitingReason.INPUT:
            raise _unexpected_wait("policy-check", view)
        # A new question: raises, so the workflow waits; the answer re-runs this node.
        ctx.interrupt(
            WaitingReason.INPUT,
            {
                # policy-check waits only for evidence (its contract); the question is said in
                # the customer's language, not in policy-check's English.
                "question": say("evidence_needed", asked.language),
                CHILD_KEY: view.task_id,
                "child_context_id": view.context_id,
                GRANT_KEY: list(granted),
                "expecting": "evidence",
            },
        )
    return _result(view, PolicyVerdict, "policy-check")


async def risk(deps: Deps, ctx: NodeContext) -> RiskVerdict | NotFound:
    inp, asked = _facts(ctx)
    data: dict[str, Any] = {"order_id": asked.order_id, "customer_id": inp.customer_id}
    if SEND_ORDER_FACTS:
        facts = await lookup(deps, ctx)
        if facts is None:
            return NotFound()
        # The risk of what would be paid: the amount named (when within the rest), else the rest.
        requested = requested_cents(asked.amount, facts.refundable_cents)
        data["amount_cents"] = min(requested or facts.refundable_cents, facts.refundable_cents)
    with reported_errors(RISK_AGENT):
        agent = await deps.peers.client("risk")
    budget = RequestBudget(inp, ctx)
    grant = budget.grant("risk-check")
    envelope = child_envelope(
        inp,
        ctx.workflow_id,
        f"refund risk for {asked.order_id}",
        grant,
        child=f"{RISK_AGENT}/{RISK_SKILL}",
    )
    async with _child_turn(RISK_AGENT, budget, grant):
        view = await agent.send(
            data=data,
            envelope=envelope,
            skill=RISK_SKILL,
            on_update=_remembering(ctx),
        )
    await _settle(budget, agent, view, RISK_AGENT, granted=grant, reserved=grant)
    if view.status is Status.WAITING:
        raise _unexpected_wait("risk-check", view)
    return _result(view, RiskVerdict, "risk-check")


@contextlib.asynccontextmanager
async def _child_turn(
    agent: str, budget: RequestBudget, reserved: tuple[int, int]
) -> AsyncIterator[None]:
    """A turn of ``agent``'s child task: its errors are the agent's (reported_errors.py), and
    one that provably never reached the child spent nothing of its grant."""
    try:
        with reported_errors(agent):
            yield
    except AccordError as error:
        if never_sent(error):
            budget.settle(reserved, (0, 0))
        raise


async def _settle(
    budget: RequestBudget,
    agent: A2AClient,
    view: TaskView,
    name: str,
    *,
    granted: Spent,
    reserved: Spent,
    before: Spent = NOTHING,
) -> None:
    """Replace the ``reserved`` part of a child's grant by what its turn reports it spent,
    checked (ENV-010): a report that breaks the rules is a CONTRACT_VIOLATION of the child,
    and the reservation (what was left of its grant) stays spent."""
    after = await _reported(agent, view, name, granted=granted, before=before)
    budget.settle(reserved, (after[0] - before[0], after[1] - before[1]))


async def _reported(
    agent: A2AClient, view: TaskView, name: str, *, granted: Spent, before: Spent
) -> Spent:
    """What a child task reports it spent over its turns: its task metadata. A streamed
    answer carries it in its status updates (TaskTracker merges them); a view without it (a
    peer that sends none there) is completed by reading the task once it stopped."""
    if not view.task_id:
        return before
    metadata = view.metadata
    if not metadata:
        with reported_errors(name):
            metadata = (await agent.get(view.task_id)).metadata
    worked = view.status in (Status.COMPLETED, Status.WAITING)
    return checked_spent(metadata, grant=granted, agent=name, before=before, worked=worked)


def _grant_of(payload: Mapping[str, Any]) -> Spent | None:
    kept = payload.get(GRANT_KEY)
    if isinstance(kept, list) and len(kept) == 2 and all(isinstance(v, int) for v in kept):
        return int(kept[0]), int(kept[1])
    return None


async def cancel_child(deps: Deps, ctx: NodeContext) -> None:
    """on_cancel hook of policy and risk: cancel the child task this node waits on."""
    child = ctx.state.get(CHILD_KEY)
    if child is None and isinstance(ctx.waiting_on, dict):
        child = ctx.waiting_on.get(CHILD_KEY)  # a waiting node: the child it asked through
    if not child:
        return
    agent = await deps.peers.client("policy" if ctx.node == "policy" else "risk")
    # Already finished (not cancelable) or gone: nothing is left to stop.
    with contextlib.suppress(AccordError):
        await agent.cancel(str(child))


def _remembering(ctx: NodeContext) -> Any:
    async def remember(view: TaskView) -> None:
        if view.task_id and ctx.state.get(CHILD_KEY) != view.task_id:
            ctx.state[CHILD_KEY] = view.task_id
            if ctx.node == "policy":
                await pause("policy.child_running", Upstream(ctx.outputs).intake().order_id)

    return remember


async def _settled(agent: A2AClient, view: TaskView, name: str) -> TaskView:
    """A child another attempt left running: wait until it stops for us."""
    pause_s = POLL_S[0]
    while not view.is_interrupted:
        await asyncio.sleep(pause_s)
        pause_s = min(pause_s * 2, POLL_S[1])
        with reported_errors(name):
            view = await agent.get(view.task_id)
    return view


def _result(view: TaskView, verdict: type[V], agent: str) -> V | NotFound:
    if view.status is Status.FAILED:
        error = view.error or AccordError(ErrorCode.INTERNAL, "the child task failed")
        if error.code is ErrorCode.NOT_FOUND:
            return NotFound()
        raise reported_by(error, agent)
    return from_peer(verdict, {**(view.data or {}), CHILD_KEY: view.task_id}, agent)


def _unexpected_wait(agent: str, view: TaskView) -> AccordError:
    reason = view.waiting_reason.value if view.waiting_reason else None
    return AccordError(
        ErrorCode.CONTRACT_VIOLATION,
        f"{agent} waits for something the orchestrator cannot relay",
        {"agent": agent, "waiting_reason": reason},
    )
