"""The intake table's end-to-end subset through the real mesh (five processes): what a
customer is told, and that the task ends, for requests that are not refund requests, an
unknown order, a Chinese denial, and a question asked three times without an answer."""

from __future__ import annotations

import re

import pytest

from accord.contracts.status import Status
from tests.mesh.support import Mesh, answer, ask

pytestmark = pytest.mark.timeout(180)
# Latin words other than order ids: a Chinese answer must have none (no English note).
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9-])(?!O-\d)[A-Za-z]{2,}")


def _latin_words(text: str) -> list[str]:
    return [w for w in _LATIN_WORD.findall(re.sub(r"O-\d+|R-[0-9A-F]+|USD", " ", text))]


async def test_a_negation_with_a_shipping_question_is_answered_in_chinese(mesh: Mesh) -> None:
    view = await ask(mesh, "C-01", "我不是要退款，只是想问一下订单 O-1002 的物流")
    assert view.status is Status.COMPLETED
    data = view.data or {}
    assert (data["decision"], data["order_id"], data["amount_cents"]) == (
        "no_refund_requested",
        "O-1002",
        0,
    )
    assert "O-1002" in data["explanation"]
    assert "送达" in data["explanation"]  # from orders.lookup: delivered, with its date
    assert _latin_words(data["explanation"]) == []


async def test_checking_an_order_is_answered_and_someone_elses_is_not_found(mesh: Mesh) -> None:
    own = await ask(mesh, "C-03", "I don't want a refund, just checking O-1004")
    assert own.status is Status.COMPLETED
    assert (own.data or {})["decision"] == "no_refund_requested"
    assert "Order O-1004 was delivered on" in (own.data or {})["explanation"]
    other = await ask(mesh, "C-01", "I don't want a refund, just checking O-1004")
    assert other.status is Status.COMPLETED
    assert "We could not find order O-1004 on your account" in (other.data or {})["explanation"]


async def test_an_unrelated_question_ends_with_what_the_assistant_can_do(mesh: Mesh) -> None:
    view = await ask(mesh, "C-02", "What's the weather?")
    assert view.status is Status.COMPLETED
    data = view.data or {}
    assert data["decision"] == "no_refund_requested"
    assert "I can help with refunds" in data["explanation"]


async def test_an_unknown_order_reads_as_not_found_not_as_policy(mesh: Mesh) -> None:
    en = await ask(mesh, "C-01", "refund O-9999, wrong item")
    zh = await ask(mesh, "C-01", "订单 O-9999 发错货了，想退款")
    for view in (en, zh):
        assert view.status is Status.COMPLETED
        assert (view.data or {})["decision"] == "not_eligible"
        assert (view.data or {})["rule"] == "order_not_found"
    assert "We could not find order O-9999 on your account" in (en.data or {})["explanation"]
    assert "policy" not in (en.data or {})["explanation"]
    assert "没有找到订单 O-9999" in (zh.data or {})["explanation"]


async def test_a_chinese_denial_carries_no_english_note(mesh: Mesh) -> None:
    view = await ask(mesh, "C-01", "订单 O-1002 鞋码不合适，想退款")
    assert view.status is Status.COMPLETED
    data = view.data or {}
    assert (data["decision"], data["rule"]) == ("not_eligible", "outside_window")
    assert "退货期" in data["explanation"]
    assert _latin_words(data["explanation"]) == []
    assert all(_latin_words(reason) == [] for reason in data["reasons"])


async def test_the_same_question_three_times_ends_the_task(mesh: Mesh) -> None:
    view = await ask(mesh, "C-02", "你好")
    questions = [view.question]
    for text in ("嗯", "嗯嗯"):
        assert view.status is Status.WAITING
        view = await answer(mesh, "C-02", view, text)
        questions.append(view.question)
    assert view.status is Status.WAITING
    assert len(set(questions)) == 1
    ended = await answer(mesh, "C-02", view, "哦")
    assert ended.status is Status.COMPLETED
    data = ended.data or {}
    assert data["decision"] == "not_understood"
    assert "3 次" in data["explanation"]
