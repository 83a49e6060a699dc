"""Customer-facing explanations from decision facts: one template per outcome and language.

Only the facts' fields reach the text, so an explanation can never promise more than the
workflow decided. ``detail`` (a short note from the deciding service) is quoted as given.
"""

from __future__ import annotations

from typing import Final

from accord.agents.models.base import DecisionFacts, Language, Outcome
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
}


def explain_facts(facts: DecisionFacts) -> str:
    lang = facts.language
    zh = lang is Language.ZH
    amount = ""
    if facts.amount:
        money = f"{facts.amount} {facts.currency}" if facts.currency else facts.amount
        amount = f"（{money}）" if zh else f" of {money}"
    ref = ""
    if facts.refund_id:
        ref = f"，退款编号 {facts.refund_id}" if zh else f" (reference {facts.refund_id})"
    detail = ""
    if facts.detail:
        detail = f"说明：{facts.detail}" if zh else f" Note: {facts.detail}"
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
    )
