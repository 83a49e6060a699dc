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
    "brand_rest": ("console", "控制台"),
    "risk_low": ("low", "低"),
    "risk_high": ("high", "高"),
    "nav_workflow": ("Workflow", "工作流"),
    "receipt_shown": ("Receipt {receipt} for {amount}", "收据 {receipt}，金额 {amount}"),
    # A task's contract status (dev.accord/status), and why a waiting one waits.
    "status_queued": ("queued", "排队中"),
    "status_running": ("in progress", "处理中"),
    "status_waiting": ("waiting", "等待中"),
    "status_completed": ("completed", "已完成"),
    "status_failed": ("failed", "失败"),
    "reason_input": ("waiting for your answer", "等待您的回答"),
    "waiting_approval": (
        "Waiting for an approver. This page checks every few seconds.",
        "正在等待审批人。本页每隔几秒检查一次。",
    ),
    "reason_auth": ("waiting for a credential", "等待凭据"),
    "reason_approval": ("waiting for an approver", "等待审批人"),
    # What the workflow decided (the result's "decision").
    "outcome_refunded": ("refunded", "已退款"),
    "outcome_pending_approval": ("waiting for an approver", "等待审批"),
    "outcome_approved": ("approved", "已批准"),
    "outcome_rejected": ("rejected by an approver", "审批人已拒绝"),
    "outcome_denied": ("not allowed by the policy", "政策不允许"),
    "outcome_need_info": ("more information needed", "需要更多信息"),
    "outcome_failed": ("could not be done", "无法完成"),
    "outcome_not_found": ("order not found", "未找到订单"),
    "outcome_no_refund": ("answered, no refund", "已答复，无退款"),
    "outcome_not_understood": ("not understood", "未能理解"),
    "outcome_approve": ("approval", "批准"),
    "outcome_reject": ("rejection", "拒绝"),
    # The customer's progress: plain steps, one per workflow node that has one (a node
    # without a step here is not shown to a customer).
    "step_intake": ("Understanding your request", "理解您的请求"),
    "step_order": ("Checking your order", "核对您的订单"),
    "step_policy": ("Checking the refund policy", "核对退款政策"),
    "step_risk": ("Reviewing the request", "审核请求"),
    "step_decide": ("Making a decision", "做出决定"),
    "step_approval": ("Review by a person", "人工审核"),
    "step_refund": ("Issuing the refund", "办理退款"),
    "step_explain": ("Preparing the answer", "准备答复"),
    "step_rejected": ("Preparing the answer", "准备答复"),
    "step_answer": ("Preparing the answer", "准备答复"),
    "step_line": ("{step}: {state}", "{step}：{state}"),
    "labelled": ("{label}: {value}", "{label}：{value}"),
    "role_customer": ("customer", "客户"),
    "role_approver": ("approver", "审批人"),
    "step_retrying": ("taking longer, trying again", "耗时较长，正在重试"),
    # The workflow picture (approvers, operators): its nodes' names and states.
    "workflow": ("Workflow", "工作流"),
    "workflow_heading": ("Workflow of a request", "请求的工作流"),
    "workflow_intro": (
        "The request's workflow as the orchestrator runs it: each step's state, read again "
        "every few seconds while it runs. Your token must be allowed to read the task.",
        "编排服务运行的请求工作流：每一步的状态，运行期间每隔几秒刷新。"
        "您的令牌必须有权读取该任务。",
    ),
    "show_workflow": ("Show", "显示"),
    "as_list": ("The steps as a list", "以列表显示各步骤"),
    "route_default": ("otherwise", "否则"),
    "since": ("since {time}", "自 {time}"),
    "decide_by": ("by {time}", "截止 {time}"),
    "state_pending": ("not run", "未运行"),
    "state_running": ("running", "运行中"),
    "state_done": ("done", "完成"),
    "state_failed": ("failed", "失败"),
    "state_waiting": ("waiting", "等待中"),
    "node_intake": ("Intake", "受理"),
    "node_checks": ("Checks", "检查"),
    "node_order": ("Order", "订单"),
    "node_policy": ("Policy", "政策"),
    "node_risk": ("Risk", "风险"),
    "node_decide": ("Decide", "决定"),
    "node_approval": ("Approval", "审批"),
    "node_refund": ("Refund", "退款"),
    "node_explain": ("Explain", "说明"),
    "node_rejected": ("Rejected", "拒绝"),
    "node_answer": ("Answer", "答复"),
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
