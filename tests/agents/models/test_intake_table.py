"""The intake table (tests/agents/intake_table.py) against the offline rules, and the same
outcomes through the model-backed path (prompts.py checking what an LLM answers)."""

from __future__ import annotations

import json

import pytest
from tests.agents.intake_table import CASES, Case

from accord.agents.models import ChatModel, Expecting, Intake, IntakeContext, Intent, Language
from accord.agents.models.intake import read_intake
from accord.refund_contracts.domain import RefundReason
from accord.runtime.models import CompletionRequest, CompletionResponse
from accord.runtime.models.text import clean_text


def _reading(found: Intake) -> tuple[object, ...]:
    return (
        found.intent,
        found.language,
        found.order_id,
        found.reason,
        found.amount,
        tuple(found.missing),
    )


def _expected(case: Case) -> tuple[object, ...]:
    return (
        case.intent,
        case.language,
        case.order_id,
        case.reason,
        case.amount,
        case.missing,
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_offline_model_reads_each_request(case: Case) -> None:
    found = read_intake(case.text)
    assert _reading(found) == _expected(case)
    if case.intent in (Intent.NO_REFUND, Intent.QUESTION):
        assert found.question is None  # nothing is asked: the workflow answers and ends
    elif found.missing or case.intent is Intent.OTHER:
        assert found.question  # in the customer's language
        assert (Language.ZH if _has_han(found.question) else Language.EN) is case.language


class _Answering(ChatModel):
    """An LLM that answers each request as the table says (what a good model would), the
    question included: prompts.py must turn its answer into the same Intake as the rules."""

    def __init__(self, answers: dict[str, dict[str, object]]) -> None:
        self.answers = {clean_text(text): data for text, data in answers.items()}

    @property
    def name(self) -> str:
        return "test:answering"

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        text = request.messages[-1].content
        data = self.answers[text]
        return CompletionResponse(text=json.dumps(data), data=data, model=self.name)


def _llm_answer(case: Case) -> dict[str, object]:
    return {
        "intent": case.intent.value,
        "order_id": case.order_id,
        "reason": case.reason.value if case.reason else None,
        "evidence": None,
        "language": case.language.value,
        # a model may well write a question even when none is due
        "question": "Anything else?" if case.intent is not Intent.REFUND else None,
    }


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_the_model_backed_path_reaches_the_same_reading(case: Case) -> None:
    model = _Answering({case.text: _llm_answer(case)})
    found = await model.understand(case.text)
    assert _reading(found) == _reading(read_intake(case.text)) == _expected(case)


async def test_the_model_backed_path_keeps_the_rules_invariants() -> None:
    asked = read_intake("refund O-1001")  # waiting for the reason
    context = IntakeContext(previous=asked, expecting=Expecting.REASON, language=Language.EN)
    weather = "What's the weather?"
    model = _Answering(
        {
            weather: {**_llm_answer(CASES[0]), "intent": "question", "reason": None},
            "refund $500 of it": {**_llm_answer(CASES[0]), "intent": "refund"},
        }
    )
    # a question in the middle of a refund does not end it: its question comes again
    for found in (read_intake(weather, context), await model.understand(weather, context=context)):
        assert (found.intent, found.reason, found.order_id) == (Intent.REFUND, None, "O-1001")
        assert found.missing
        assert found.question
    # the amount is the customer's words, whatever the model answers
    said = await model.understand("refund $500 of it", context=context)
    assert said.amount is not None
    assert said.amount.cents == 50_000


def test_answers_in_a_conversation() -> None:
    """Replies to intake's questions: a usable one, a question, a change of mind."""
    asked = read_intake("退款 O-1002")
    context = IntakeContext(previous=asked, expecting=Expecting.REASON, language=Language.ZH)
    assert read_intake("鞋子太小了", context).reason is RefundReason.WRONG_SIZE
    assert read_intake("就是不想要了", context).reason is RefundReason.CHANGED_MIND
    assert read_intake("嗯，原因不好说", context).reason is RefundReason.OTHER  # an answer
    unclear = read_intake("为什么要问这个？", context)
    assert (unclear.intent, unclear.reason) == (Intent.REFUND, None)  # asked again
    dropped = read_intake("算了，我不退了", context)
    assert (dropped.intent, dropped.order_id) == (Intent.NO_REFUND, "O-1002")
    greeted = read_intake("hello")
    then = IntakeContext(previous=greeted, language=Language.EN)
    assert read_intake("What's the weather?", then).intent is Intent.QUESTION
    assert read_intake("it arrived broken, O-1005", then).intent is Intent.REFUND


def _has_han(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
