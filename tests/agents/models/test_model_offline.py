"""The offline model's completion level and its explanations."""

from __future__ import annotations

import pytest

from accord.agents.models import DecisionFacts, Language, OfflineModel, Outcome, Task, prompts
from accord.agents.models import __all__ as public
from accord.contracts.errors import AccordError, ErrorCode
from accord.runtime.models import CompletionRequest, Message, Role


async def test_complete_serves_intake_from_the_payload() -> None:
    reply = await OfflineModel().complete(prompts.intake_request("订单 O-1001 鞋码不合适", None))
    assert reply.data is not None
    assert (reply.data["order_id"], reply.data["reason"], reply.data["language"]) == (
        "O-1001",
        "wrong_size",
        "zh",
    )
    # The same reply passes the checks an LLM's answer must pass.
    intake = prompts.read_intake(reply, "订单 O-1001 鞋码不合适", None)
    assert intake.order_id == "O-1001"


async def test_complete_serves_explain_and_refuses_chat() -> None:
    facts = DecisionFacts(outcome=Outcome.DENIED, language=Language.EN, order_id="O-7")
    reply = await OfflineModel().complete(prompts.explain_request(facts))
    assert prompts.read_explanation(reply).startswith("Order O-7 is not eligible")
    with pytest.raises(AccordError) as err:
        await OfflineModel().complete(
            CompletionRequest(messages=[Message(role=Role.USER, content="hi")])
        )
    assert err.value.code is ErrorCode.UNSUPPORTED_OPERATION
    with pytest.raises(AccordError) as bad:
        await OfflineModel().complete(
            CompletionRequest(
                task=Task.EXPLAIN,
                messages=[Message(role=Role.USER, content="x")],
                payload={"outcome": "nope"},
            )
        )
    assert bad.value.code is ErrorCode.INVALID_INPUT


@pytest.mark.parametrize("outcome", list(Outcome))
@pytest.mark.parametrize("language", list(Language))
async def test_every_outcome_explains_in_both_languages(
    outcome: Outcome, language: Language
) -> None:
    facts = DecisionFacts(
        outcome=outcome,
        language=language,
        order_id="O-1001",
        missing=["evidence"],
        error=ErrorCode.UNAVAILABLE,
    )
    text = await OfflineModel().explain(facts)
    assert "O-1001" in text
    assert "{" not in text
    has_han = any("\u4e00" <= ch <= "\u9fff" for ch in text)
    assert has_han is (language is Language.ZH)


async def test_explanations_say_only_the_facts() -> None:
    model = OfflineModel()
    refunded = await model.explain(
        DecisionFacts(
            outcome=Outcome.REFUNDED,
            language=Language.EN,
            order_id="O-1",
            amount="59.00",
            currency="CNY",
            refund_id="R-9",
        )
    )
    assert refunded == "Your refund of CN¥59.00 for order O-1 has been issued (reference R-9)."
    zh = await model.explain(
        DecisionFacts(
            outcome=Outcome.NEED_INFO,
            language=Language.ZH,
            order_id="O-1",
            missing=["evidence", "order_id"],
        )
    )
    assert zh == "为继续处理订单 O-1，还需要：问题照片、订单号。"
    failed = await model.explain(
        DecisionFacts(outcome=Outcome.FAILED, language=Language.EN, error=ErrorCode.POLICY_DENIED)
    )
    assert failed.endswith("Please contact support.")
    assert "(unknown)" in failed


def test_public_names_are_sorted_and_importable() -> None:
    import accord.agents.models as models

    assert list(public) == sorted(public)
    assert all(hasattr(models, name) for name in public)
