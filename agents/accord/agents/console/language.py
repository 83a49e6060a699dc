"""Chinese or English: chosen from the browser (``Accept-Language``), switchable (``?lang=``,
kept in a cookie), and the one table of the console's words in both languages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

LANGUAGES: Final = ("en", "zh")
DEFAULT_LANGUAGE: Final = "en"
LANGUAGE_COOKIE: Final = "accord_lang"
LANGUAGE_QUERY: Final = "lang"

# key -> (English, Chinese). The pages' scripts get the same table (no second copy in JS).
WORDS: Final[Mapping[str, tuple[str, str]]] = {
    "title": ("Accord console", "Accord 控制台"),
    "nav": ("Main", "主导航"),
    "skip": ("Skip to content", "跳到正文"),
    "nav_customer": ("Refund assistant", "退款助手"),
    "nav_approver": ("Approvals", "审批"),
    "nav_signin": ("Sign in", "登录"),
    "sign_out": ("Sign out", "退出"),
    "switch_language": ("中文", "English"),
    "switch_language_label": ("Switch to Chinese", "切换到英文"),
    "signed_in_as": ("Signed in as {sub} ({roles})", "已登录：{sub}（{roles}）"),
    "not_signed_in": ("Not signed in.", "尚未登录。"),
    "signin_heading": ("Sign in", "登录"),
    "signin_intro": (
        "Paste a bearer token (development: accord token --user C-03). It stays in this "
        "browser tab and is sent only to the orchestrator.",
        "粘贴一个 Bearer 令牌（开发环境：accord token --user C-03）。"
        "令牌只保存在本标签页中，只发送给编排服务。",
    ),
    "token_label": ("Token", "令牌"),
    "signin_submit": ("Sign in", "登录"),
    "signin_bad_token": (
        "That is not a token (three dot-separated parts).",
        "这不是令牌（应为三段，用点分隔）。",
    ),
    "customer_heading": ("Refund assistant", "退款助手"),
    "conversation": ("Conversation", "对话"),
    "message_label": ("Your message", "您的消息"),
    "answer_label": ("Your answer", "您的回答"),
    "send": ("Send", "发送"),
    "new_request": ("New request", "新请求"),
    "progress": ("Progress", "进度"),
    "earlier_requests": ("Earlier requests", "以前的请求"),
    "no_requests": ("No requests yet.", "暂无请求。"),
    "receipt": ("Receipt", "收据"),
    "receipt_id": ("Receipt", "收据号"),
    "decision": ("Decision", "决定"),
    "waiting_approval": (
        "Waiting for an approver. This page checks every few seconds.",
        "正在等待审批人。本页每隔几秒检查一次。",
    ),
    "approver_heading": ("Approvals", "审批"),
    "queue": ("Waiting for a decision", "待决定"),
    "queue_empty": ("Nothing waits for a decision.", "没有待决定的退款。"),
    "queue_updated": ("Queue checked at {time}", "队列检查于 {time}"),
    "new_case": ("New case: order {order}", "新案件：订单 {order}"),
    "case": ("Case", "案件"),
    "pick_case": ("Choose a case from the queue.", "请从队列中选择一个案件。"),
    "order": ("Order", "订单"),
    "customer": ("Customer", "客户"),
    "amount": ("Amount", "金额"),
    "risk": ("Risk", "风险"),
    "score": ("Score", "分数"),
    "signals": ("Signals", "信号"),
    "items": ("Items", "商品"),
    "refunded_before": ("Refunded before", "此前退款"),
    "refunded_before_value": (
        "{count} refund(s), {amount}; {left} left",
        "{count} 笔，共 {amount}；剩余可退 {left}",
    ),
    "request": ("Customer's words", "客户原话"),
    "evidence": ("Evidence", "证据"),
    "rule": ("Policy rule", "政策规则"),
    "policy": ("Policy check", "政策检查"),
    "delivered": ("Delivered", "已送达"),
    "days_ago": ("{days} days ago", "{days} 天前"),
    "due": ("Decide by", "截止时间"),
    "task": ("Task", "任务"),
    "note_label": ("Note (shown to the customer on rejection)", "备注（拒绝时会告知客户）"),
    "approve": ("Approve", "批准"),
    "reject": ("Reject", "拒绝"),
    "outcome": ("Outcome", "结果"),
    "recorded": (
        "{decision} recorded: the refund is {status}",
        "已记录{decision}：退款状态为 {status}",
    ),
    "attention": ("Needs a person", "需要人工处理"),
    "refused": ("Refused by the orchestrator", "编排服务拒绝了请求"),
    "failed": ("The request failed", "请求失败"),
    "sign_in_first": ("Sign in first.", "请先登录。"),
}


def words(language: str) -> dict[str, str]:
    index = LANGUAGES.index(language)
    return {key: pair[index] for key, pair in WORDS.items()}


def choose(query: str | None, cookie: str | None, accept_language: str | None) -> str:
    """``?lang=`` first (the switch), then the cookie it left, then the browser's order."""
    for given in (query, cookie):
        if given in LANGUAGES:
            return given
    return from_accept_language(accept_language or "")


def from_accept_language(header: str) -> str:
    """The first of our languages by the header's q-values (RFC 9110 12.5.4), else English."""
    ranked: list[tuple[float, int, str]] = []
    for position, item in enumerate(header.split(",")):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGUAGES and quality > 0:
            ranked.append((-quality, position, primary))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE
