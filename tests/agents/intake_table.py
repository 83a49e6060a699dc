"""The intake test table (issue 13): the customer requests that were tried, in Chinese and
English, and more of our own. One row per request: what intake must read from it.

Shared by the unit tests (the offline rules, and the model-backed path through prompts.py)
and the end-to-end subset through a real mesh (tests/mesh/test_intake_mesh.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from accord.agents.models import Intent, Language, Missing, RequestedAmount
from accord.refund_contracts.domain import RefundReason

REFUND, NO_REFUND, QUESTION, OTHER = Intent.REFUND, Intent.NO_REFUND, Intent.QUESTION, Intent.OTHER
ZH, EN = Language.ZH, Language.EN


@dataclass(frozen=True)
class Case:
    text: str
    intent: Intent
    language: Language
    order_id: str | None = None
    reason: RefundReason | None = None
    amount: RequestedAmount | None = None
    missing: tuple[Missing, ...] = field(default=())

    @property
    def id(self) -> str:
        return self.text[:40]


def cents(n: int) -> RequestedAmount:
    return RequestedAmount(cents=n)


def percent(n: int) -> RequestedAmount:
    return RequestedAmount(percent=n)


R = RefundReason
CASES: Final[tuple[Case, ...]] = (
    # -- the 17 requests of issue 13 -------------------------------------------------------
    # order id in the text
    Case("鞋码不合适，想退款，订单 O-1001", REFUND, ZH, "O-1001", R.WRONG_SIZE),
    Case("my mug arrived broken, order O-1005", REFUND, EN, "O-1005", R.DAMAGED),
    Case("Ｏ－１００１ 不合适 退货", REFUND, ZH, "O-1001", R.WRONG_SIZE),  # full-width
    Case("refund O-9999, wrong item", REFUND, EN, "O-9999", R.NOT_AS_DESCRIBED),  # not theirs
    # missing order
    Case("我想退款", REFUND, ZH, missing=(Missing.ORDER_ID, Missing.REASON)),
    Case(
        "the earbuds don't fit, I want a refund",
        REFUND,
        EN,
        None,
        R.WRONG_SIZE,
        missing=(Missing.ORDER_ID,),
    ),
    # missing reason
    Case("退款 O-1002", REFUND, ZH, "O-1002", missing=(Missing.REASON,)),
    Case("refund O-1004 please", REFUND, EN, "O-1004", missing=(Missing.REASON,)),
    # negation: not a refund request
    Case("我不是要退款，只是想问一下订单 O-1002 的物流", NO_REFUND, ZH, "O-1002"),
    Case("I don't want a refund, just checking O-1004", NO_REFUND, EN, "O-1004"),
    # unrelated questions
    Case("What's the weather?", QUESTION, EN),
    Case("今天天气怎么样？", QUESTION, ZH),
    # mixed language: one language for the answer, the one that outweighs the other
    Case("我要 refund，订单 O-1003 收到的是 wrong item", REFUND, ZH, "O-1003", R.NOT_AS_DESCRIBED),
    Case("O-1001 shoes too small, 想退款", REFUND, EN, "O-1001", R.WRONG_SIZE),
    # amounts: recognised and carried (the partial refund itself is decided elsewhere)
    Case("refund $10 of O-1006, box dented", REFUND, EN, "O-1006", R.DAMAGED, cents(1000)),
    Case("订单 O-1001 的耳机坏了，退 10 块", REFUND, ZH, "O-1001", R.DAMAGED, cents(1000)),
    Case("refund half of O-1001, it's too small", REFUND, EN, "O-1001", R.WRONG_SIZE, percent(50)),
    # -- our own ----------------------------------------------------------------------------
    Case("Where is my order O-1002?", QUESTION, EN, "O-1002"),
    Case("请问订单 O-1005 什么时候到？", QUESTION, ZH, "O-1005"),
    Case("never mind, I don't need a refund anymore", NO_REFUND, EN),
    Case("不用退款了，谢谢", NO_REFUND, ZH),
    Case("I didn't get my refund for O-1001", REFUND, EN, "O-1001", missing=(Missing.REASON,)),
    Case(
        "I want a refund, not a replacement, O-1001 wrong size", REFUND, EN, "O-1001", R.WRONG_SIZE
    ),
    Case("Can I get a refund for O-1001? It doesn't fit", REFUND, EN, "O-1001", R.WRONG_SIZE),
    Case(
        "O-1001 和 O-1005 都坏了，想退款", REFUND, ZH, None, R.DAMAGED, missing=(Missing.ORDER_ID,)
    ),
    Case("退款 20 元 订单 O-1005 杯子碎了", REFUND, ZH, "O-1005", R.DAMAGED, cents(2000)),
    Case("订单 O-1001 退一半，不想要了", REFUND, ZH, "O-1001", R.CHANGED_MIND, percent(50)),
    Case(
        "refund 25% of O-1006, speaker is scratched", REFUND, EN, "O-1006", R.DAMAGED, percent(25)
    ),
    Case("hello", OTHER, EN),
    Case("你好", OTHER, ZH),
    Case("O-1001", OTHER, EN, "O-1001"),
)
