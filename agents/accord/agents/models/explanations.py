"""Customer-facing explanations from decision facts: one template per outcome and language.

Only the facts' fields reach the text, so an explanation can never promise more than the
workflow decided. ``detail`` is a sentence the orchestrator already rendered in the customer's
language from a check's codes (messages.py), or an approver's note, quoted as given.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Final

from accord.agents.models.base import DecisionFacts, Language, Outcome
from accord.agents.models.money_text import format_money
from accord.contracts.errors import REGISTRY, ErrorCode, RetryClass

_TEMPLATES: Final[dict[Outcome, dict[Language, str]]] = {
    Outcome.REFUNDED: {
        Language.EN: "Your refund{amount} for order {order} has been issued{ref}.",
        Language.ZH: "订单 {order} 的退款{amount}已办理{ref}。",
    },
    Outcome.PENDING_APPROVAL: {
        Language.EN: "Your refund request for order {order} needs a review by our team. "
        "We will let you know once it is decided.",
        Language.ZH: "订单 {order} 的退款申请需要人工审核，审核结果出来后会通知您。",
    },
    Outcome.APPROVED: {
        Language.EN: "Your refund request for order {order} has been approved.",
        Language.ZH: "订单 {order} 的退款申请已通过审核。",
    },
    Outcome.REJECTED: {
        Language.EN: "After review, the refund for order {order} was not approved.{detail}",
        Language.ZH: "经审核，订单 {order} 的退款未获批准。{detail}",
    },
    Outcome.DENIED: {
        Language.EN: "Order {order} is not eligible for a refund under our policy.{detail}",
        Language.ZH: "根据退款政策，订单 {order} 不符合退款条件。{detail}",
    },
    Outcome.NEED_INFO: {
        Language.EN: "To continue with order {order}, we need: {missing}.{detail}",
        Language.ZH: "为继续处理订单 {order}，还需要：{missing}。{detail}",
    },
    Outcome.FAILED: {
        Language.EN: "We could not complete your request for order {order}. {retry}",
        Language.ZH: "订单 {order} 的请求暂时无法完成。{retry}",
    },
    Outcome.NOT_FOUND: {
        Language.EN: "We could not find order {order} on your account. Please check the "
        "order number (it looks like O-1001).",
        Language.ZH: "您的账户下没有找到订单 {order}，请核对订单号（格式如 O-1001）。",
    },
    # {detail}: the order's status sentence (messages.py "status.*"), or the offer below
    Outcome.NO_REFUND: {
        Language.EN: "{opening}{detail}",
        Language.ZH: "{opening}{detail}",
    },
    Outcome.NOT_UNDERSTOOD: {
        Language.EN: "I asked {asked} times for {missing} without an answer I could use, so I "
        "have closed this request. Please start again with your order number and what went "
        'wrong, for example "O-1001 arrived damaged".',
        Language.ZH: "已经询问了 {asked} 次{missing}，仍未得到可用的答复，本次请求已结束。"
        "请重新发起，并提供订单号和遇到的问题，例如“O-1001 到货损坏”。",
    },
}
# NO_REFUND: what the customer said (params["kind"]) decides the opening; without an order the
# answer says what this assistant can do instead of guessing.
_OPENING: Final = {
    "no_refund": {
        Language.EN: "Understood, no refund. ",
        Language.ZH: "好的，不办理退款。",
    },
    "question": {Language.EN: "", Language.ZH: ""},
}
_OFFER: Final = {
    Language.EN: "I can help with refunds and with the status of your orders, but not with "
    "other questions. Tell me an order number (like O-1001) and I will look it up.",
    Language.ZH: "我可以帮您办理退款和查询订单状态，其他问题暂时无法解答。"
    "请告诉我订单号（例如 O-1001），我来为您查询。",
}
_RETRY: Final = {
    True: {Language.EN: "Please try again in a few minutes.", Language.ZH: "请稍后再试。"},
    False: {Language.EN: "Please contact support.", Language.ZH: "请联系客服。"},
}
_NO_ORDER: Final = {Language.EN: "(unknown)", Language.ZH: "（未知）"}
_WHAT: Final = {
    "order_id": {Language.EN: "your order number", Language.ZH: "订单号"},
    "reason": {Language.EN: "the reason for the refund", Language.ZH: "退款原因"},
    "evidence": {Language.EN: "a photo of the problem", Language.ZH: "问题照片"},
    "help": {
        Language.EN: "your order number and what went wrong",
        Language.ZH: "订单号和遇到的问题",
    },
}


def explain_facts(facts: DecisionFacts) -> str:
    lang = facts.language
    zh = lang is Language.ZH
    amount = ""
    if facts.amount:
        cents = int(Decimal(facts.amount) * 100)  # the facts' pattern: at most two decimals
        money = format_money(cents, facts.currency, lang)
        amount = f"（{money}）" if zh else f" of {money}"
    ref = ""
    if facts.refund_id:
        ref = f"，退款编号 {facts.refund_id}" if zh else f" (reference {facts.refund_id})"
    detail = ""
    if facts.outcome is Outcome.NO_REFUND:
        detail = facts.detail or _OFFER[lang]
    elif facts.detail:
        detail = f"说明：{facts.detail}" if zh else f" Note: {facts.detail}"
    kind = str(facts.params.get("kind") or "question")
    sep = "、" if zh else ", "
    missing = sep.join(_WHAT.get(m, {}).get(lang, m) for m in facts.missing) or (
        "更多信息" if zh else "more information"
    )
    retryable = facts.error is not None and REGISTRY[ErrorCode(facts.error)].retry is (
        RetryClass.RETRY
    )
    return _TEMPLATES[facts.outcome][lang].format(
        order=facts.order_id or _NO_ORDER[lang],
        amount=amount,
        ref=ref,
        detail=detail,
        missing=missing,
        retry=_RETRY[retryable][lang],
        opening=_OPENING.get(kind, _OPENING["question"])[lang],
        asked=facts.params.get("asked") or 3,
    )
