"""intake: understand the customer's message; ask (waiting: input) for what is missing."""

from __future__ import annotations

from accord.agents.models import Expecting, Intake, IntakeContext, Intent, Missing
from accord.agents.models.intake import help_offer, missing_of, question_for
from accord.agents.refund.facts import MAX_QUESTIONS, WorkflowInput, answer_text
from accord.agents.refund.node_deps import Deps
from accord.agents.refund.outputs import Understood
from accord.agents.workflow import NodeContext
from accord.contracts.domain import is_order_id
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WaitingReason


async def intake(deps: Deps, ctx: NodeContext) -> Understood:
    inp = WorkflowInput.model_validate(ctx.input)
    model = deps.model(inp)
    found = with_given_order(await model.understand(inp.text), inp.order_id)
    # Every answer so far is replayed in order: the same questions come back, the answers
    # recorded in the log answer them, and only a new question interrupts.
    for _ in range(MAX_QUESTIONS):
        if found.intent is Intent.REFUND and not found.missing:
            break
        expecting = Expecting(found.missing[0].value) if found.missing else None
        question = found.question or help_offer(found.language)
        payload = {"question": question, "expecting": expecting.value if expecting else None}
        answer = ctx.interrupt(WaitingReason.INPUT, payload)
        context = IntakeContext(previous=found, expecting=expecting, language=found.language)
        found = checked_order(await model.understand(answer_text(answer.value), context=context))
    else:
        raise _not_understood()
    if found.order_id is None:  # nothing missing means it is there (missing_of)
        raise _not_understood()
    return Understood(
        order_id=found.order_id,
        reason=found.reason,
        evidence=found.evidence,
        language=found.language,
        customer_id=inp.customer_id,
    )


def _not_understood() -> AccordError:
    return AccordError(
        ErrorCode.INVALID_INPUT,
        "the request could not be understood as a refund request",
        {"field": "text", "questions": MAX_QUESTIONS},
    )


def with_given_order(found: Intake, order_id: str | None) -> Intake:
    """A structured ``order_id`` from the request's DataPart wins over the text."""
    if order_id:
        intent = Intent.REFUND
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
    missing = [Missing.ORDER_ID, *(m for m in found.missing if m is not Missing.ORDER_ID)]
    return found.model_copy(
        update={
            "order_id": None,
            "missing": missing,
            "question": question_for(Missing.ORDER_ID, found.language),
        }
    )
