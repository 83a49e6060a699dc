"""intake: understand the customer's message; ask (waiting: input) for what is missing.

It routes (graph 2): a complete refund request goes on to the checks (label "refund"); a
message that is not a refund request ("I don't want a refund, just checking O-1004", "What's
the weather?") goes to ``answer`` (label "answer"), and so does a conversation in which the
same question was asked MAX_ASKS times without a usable answer: the task ends with an
explanation instead of asking forever.
"""

from __future__ import annotations

from collections import Counter

from accord.agents.models import Expecting, Intake, IntakeContext, Intent, Missing
from accord.agents.models.base import ENDS_CONVERSATION
from accord.agents.models.intake import help_offer, missing_of, question_for
from accord.agents.refund.facts import MAX_ASKS, WorkflowInput, answer_text
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.outputs import Inquiry, Understood
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WaitingReason
from accord.refund_contracts import compat
from accord.refund_contracts.domain import is_order_id
from accord.runtime.workflow import NodeContext, Route

REFUND_LABEL = "refund"
ANSWER_LABEL = "answer"


async def intake(deps: Deps, ctx: NodeContext) -> Route:
    inp = WorkflowInput.model_validate(ctx.input)
    model = deps.model(inp, ctx)
    found = with_given_order(await model.understand(inp.text), inp.order_id)
    asked: Counter[Expecting | None] = Counter()
    # Every answer so far is replayed in order: the same questions come back, the answers
    # recorded in the log answer them, and only a new question interrupts.
    while not (found.intent is Intent.REFUND and not found.missing):
        if found.intent in ENDS_CONVERSATION:
            kind = "no_refund" if found.intent is Intent.NO_REFUND else "question"
            return Route(ANSWER_LABEL, _inquiry(kind, found, inp))
        expecting = Expecting(found.missing[0].value) if found.missing else None
        if asked[expecting] >= MAX_ASKS:
            gave_up = _inquiry("not_understood", found, inp)
            update = {"expecting": expecting.value if expecting else None, "asked": MAX_ASKS}
            return Route(ANSWER_LABEL, gave_up.model_copy(update=update))
        asked[expecting] += 1
        question = found.question or help_offer(found.language)
        payload = {"question": question, "expecting": expecting.value if expecting else None}
        answer = ctx.interrupt(WaitingReason.INPUT, payload)
        context = IntakeContext(previous=found, expecting=expecting, language=found.language)
        found = checked_order(await model.understand(answer_text(answer.value), context=context))
    if found.order_id is None:  # nothing missing means it is there (missing_of)
        raise not_understood()
    understood = Understood(
        order_id=found.order_id,
        reason=found.reason,
        evidence=found.evidence,
        language=found.language,
        customer_id=inp.customer_id,
        amount=found.amount,
    )
    return Route(REFUND_LABEL, understood)


@compat.kept_for(compat.REFUND_GRAPH_V1_V2)
async def intake_v1(deps: Deps, ctx: NodeContext) -> Understood:
    """Graph 1's intake, for workflows started on it: it cannot route, so anything but a
    refund request fails with INVALID_INPUT, as it did."""
    routed = await intake(deps, ctx)
    if isinstance(routed.output, Understood):
        return routed.output
    raise not_understood()


def _inquiry(kind: str, found: Intake, inp: WorkflowInput) -> Inquiry:
    return Inquiry.model_validate(
        {
            "kind": kind,
            "order_id": found.order_id if found.order_id and is_order_id(found.order_id) else None,
            "language": found.language,
            "customer_id": inp.customer_id,
        }
    )


def not_understood() -> AccordError:
    return AccordError(
        ErrorCode.INVALID_INPUT,
        "the request could not be understood as a refund request",
        {"field": "text", "questions": MAX_ASKS},
    )


def with_given_order(found: Intake, order_id: str | None) -> Intake:
    """A structured ``order_id`` from the request's DataPart wins over the text (and makes
    it a refund request, unless the text says it is not one)."""
    if order_id:
        intent = found.intent if found.intent in ENDS_CONVERSATION else Intent.REFUND
        missing = missing_of(intent, order_id, found.reason)
        question = question_for(missing[0], found.language) if missing else None
        found = found.model_copy(
            update={
                "intent": intent,
                "order_id": order_id,
                "missing": missing,
                "question": question,
            }
        )
    return checked_order(found)


def checked_order(found: Intake) -> Intake:
    """An order id the tools would refuse (``O-12``) is asked for again."""
    if found.order_id is None or is_order_id(found.order_id):
        return found
    if found.intent in ENDS_CONVERSATION:
        return found  # nothing will be looked up under it; answer names no order
    missing = [Missing.ORDER_ID, *(m for m in found.missing if m is not Missing.ORDER_ID)]
    return found.model_copy(
        update={
            "order_id": None,
            "missing": missing,
            "question": question_for(Missing.ORDER_ID, found.language),
        }
    )
