"""Customer-facing sentences for the codes the checks return, one table, each in zh and en.

policy-check answers a rule code and its parameters (``params``: order id, days since
delivery, window, amounts); risk-check a level and signal codes. The orchestrator says them to
the customer from here, in the customer's language, so that a Chinese answer never carries an
English note. A code with no row (a newer peer's rule) reads as its generic sentence.

Parameters are filled by name; one that is missing reads as a neutral placeholder rather than
failing the answer (an older policy-check sends no ``params``; its rule still has a sentence:
compat.POLICY_ENGLISH_EXPLANATION).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any, Final

from accord.agents.models.base import Language
from accord.agents.models.money_text import money

EN, ZH = Language.EN, Language.ZH

MESSAGES: Final[dict[str, dict[Language, str]]] = {
    # policy-check's rules (contracts/.../policy-check.yaml, output ``rule``)
    "within_window": {
        EN: "Order {order_id} was delivered {days} days ago, within the {window_days}-day "
        "return window; up to {refundable} can be refunded.",
        ZH: "订单 {order_id} 于 {days} 天前送达，在 {window_days} 天退货期内，"
        "最多可退 {refundable}。",
    },
    "outside_window": {
        EN: "Order {order_id} was delivered {days} days ago, outside the {window_days}-day "
        "return window.",
        ZH: "订单 {order_id} 已送达 {days} 天，超出了 {window_days} 天的退货期。",
    },
    "final_sale": {
        EN: "Order {order_id} contains a final-sale item, which cannot be returned or "
        "refunded unless it arrived damaged.",
        ZH: "订单 {order_id} 含有最终销售（不退不换）商品，除非到货时已损坏，否则不能退款。",
    },
    "already_refunded": {
        EN: "Order {order_id} has already been refunded in full ({refunded}); nothing is "
        "left to refund.",
        ZH: "订单 {order_id} 已全额退款（{refunded}），没有可再退的金额。",
    },
    "not_delivered": {
        EN: "Order {order_id} has not been delivered yet (status: {status}), so it cannot be "
        "refunded as a return. If it is late, please wait for delivery or ask us to trace it.",
        ZH: "订单 {order_id} 尚未送达（状态：{status}），暂不能按退货退款。如果物流延误，"
        "请等待送达或联系我们查询物流。",
    },
    "amount_exceeds_refundable": {
        EN: "The amount you asked for ({requested}) is more than the {refundable} that can "
        "still be refunded on order {order_id}; at most {refundable} will be refunded.",
        ZH: "您申请的金额（{requested}）超过订单 {order_id} 仍可退的 {refundable}，"
        "最多退 {refundable}。",
    },
    "damage_with_evidence": {
        EN: "The item arrived damaged and your evidence supports the claim; up to "
        "{refundable} can be refunded.",
        ZH: "商品到货损坏，且您提供的凭证支持该申请，最多可退 {refundable}。",
    },
    # the orchestrator's own
    "order_not_found": {
        EN: "We could not find order {order_id} on your account.",
        ZH: "您的账户下没有找到订单 {order_id}。",
    },
    "evidence_needed": {
        EN: "You said the item arrived damaged. Please describe the damage or give a photo "
        "reference (for example a link or an upload id) so the claim can be checked.",
        ZH: "您提到商品到货损坏，请描述损坏情况或提供照片（例如链接或上传编号），以便核实。",
    },
    "already_issued": {
        EN: "This refund had already been issued; it was paid once only.",
        ZH: "这笔退款此前已办理，只支付一次。",
    },
    "approver_decided": {
        EN: "{decision} by approver {approver}.",
        ZH: "审核人 {approver}：{decision}。",
    },
    "unknown_rule": {
        EN: "Policy rule {rule} decided this request.",
        ZH: "该申请由退款规则 {rule} 判定。",
    },
    # risk-check's levels and signals (risk_rules.Signal)
    "risk": {
        EN: "Risk {level} (score {score}): {signals}.",
        ZH: "风险{level}（评分 {score}）：{signals}。",
    },
    # what a customer is told of another service's error (refund/reported_errors.py): the
    # code goes with it; the service's own words stay in the workflow log
    "failure.retry": {
        EN: "Sorry, a service this request needs is not available right now. Please try "
        "again in a little while.",
        ZH: "抱歉，处理此请求所需的服务暂时不可用，请稍后再试。",
    },
    "failure.stop": {
        EN: "Sorry, this request could not be completed because of a problem on our side. "
        "Please contact support if you still need help.",
        ZH: "抱歉，由于我们这边的问题，此请求无法完成。如仍需帮助，请联系客服。",
    },
    "budget_exhausted": {
        EN: "Sorry, this request has used up its budget ({spent} of {units} units), so I have "
        "to stop here. Please start a new request if you still need help.",
        ZH: "抱歉，本次请求的预算已用完（已用 {spent}/{units} 个单位），只能到此为止。"
        "如仍需帮助，请重新发起请求。",
    },
    "risk.low": {EN: "low", ZH: "低"},
    "risk.high": {EN: "high", ZH: "高"},
    "signal.none": {EN: "no risk signals", ZH: "无风险信号"},
    "signal.large_amount": {EN: "a large amount", ZH: "金额较大"},
    "signal.frequent_refunds": {EN: "frequent recent refunds", ZH: "近期退款频繁"},
    "signal.chargebacks": {EN: "chargebacks on record", ZH: "有拒付记录"},
    "signal.new_account": {EN: "a new account", ZH: "新注册账户"},
    "signal.high_refund_volume": {EN: "a high recent refund volume", ZH: "近期退款金额较高"},
    # an order's status, for a question that is not a refund request (orders.lookup's status)
    "status.delivered": {
        EN: "Order {order_id} was delivered on {delivered_on} ({days} days ago).",
        ZH: "订单 {order_id} 已于 {delivered_on} 送达（{days} 天前）。",
    },
    "status.shipped": {
        EN: "Order {order_id} (ordered on {ordered_on}) has shipped and is on its way.",
        ZH: "订单 {order_id}（{ordered_on} 下单）已发货，正在运输途中。",
    },
    "status.processing": {
        EN: "Order {order_id} (ordered on {ordered_on}) is being prepared and has not shipped yet.",
        ZH: "订单 {order_id}（{ordered_on} 下单）正在备货，尚未发货。",
    },
    "status.canceled": {
        EN: "Order {order_id} (ordered on {ordered_on}) was canceled.",
        ZH: "订单 {order_id}（{ordered_on} 下单）已取消。",
    },
    "status.other": {
        EN: "Order {order_id} is {status}.",
        ZH: "订单 {order_id} 当前状态：{status}。",
    },
    # The receipt a person reads next to the refund's data (the orchestrator's "receipt"
    # artifact): one line per fact, so that it prints and forwards as it is.
    "receipt": {
        EN: "Refund receipt {receipt_id}\nOrder: {order_id}\nAmount refunded: {amount}\n"
        "Date: {date}",
        ZH: "退款凭证 {receipt_id}\n订单：{order_id}\n退款金额：{amount}\n日期：{date}",
    },
    "receipt.approved_by": {EN: "Approved by: {approver}", ZH: "批准人：{approver}"},
    "decision.approve": {EN: "approved", ZH: "已批准"},
    "decision.reject": {EN: "rejected", ZH: "未批准"},
}
_PLACEHOLDER: Final = {EN: "(unknown)", ZH: "（未知）"}
_LIST_SEP: Final = {EN: ", ", ZH: "、"}


class _Defaulting(dict[str, Any]):
    def __init__(self, values: Mapping[str, Any], missing: str) -> None:
        super().__init__({k: v for k, v in values.items() if v is not None})
        self._missing = missing

    def __missing__(self, key: str) -> str:
        return self._missing


def has_message(code: str) -> bool:
    return code in MESSAGES


def say(code: str, language: Language, **params: Any) -> str:
    """The sentence for ``code`` in ``language`` with ``params`` filled in by name."""
    row = MESSAGES.get(code)
    if row is None:
        row, params = MESSAGES["unknown_rule"], {**params, "rule": code}
    return string.Formatter().vformat(
        row[language], (), _Defaulting(params, _PLACEHOLDER[language])
    )


def join(items: list[str], language: Language) -> str:
    return _LIST_SEP[language].join(items)


def risk_sentence(level: str, score: float | None, signals: list[str], language: Language) -> str:
    named = [say(f"signal.{s}", language) if has_message(f"signal.{s}") else s for s in signals]
    return say(
        "risk",
        language,
        level=say(f"risk.{level}", language) if has_message(f"risk.{level}") else level,
        score=score,
        signals=join(named, language) or say("signal.none", language),
    )


def rule_sentence(
    rule: str, params: Mapping[str, Any], currency: str | None, language: Language
) -> str:
    """A policy rule's sentence from its code and parameters (policy-check's ``params``)."""

    def cents(name: str) -> str | None:
        value = params.get(name)
        return money(value, currency, language) if isinstance(value, int) else None

    return say(
        rule,
        language,
        order_id=params.get("order_id"),
        status=params.get("status"),
        days=params.get("days_since_delivery"),
        window_days=params.get("window_days"),
        refundable=cents("refundable_cents"),
        refunded=cents("refunded_cents"),
        requested=cents("requested_cents"),
    )
