"""The console in a real browser (Debian's headless Chromium, driven by Playwright for Python):
a customer asks for a refund in one browser context, an approver in another sees the case
appear without reloading, opens it and approves it with a note (by keyboard), the customer's
page shows the receipt, and a customer who opens the approver page is refused by the API.
The approver's case shows the request's workflow as a graph with each step's state; the
customer sees plain steps in the page's language. Then every page is laid out at desktop
(1280 px) and phone (375 px) width, in Chinese and English (a CJK font installed: .ci/run):
nothing overflows horizontally, every key element is visible inside the viewport, the
header's pages stay on one line; the workflow page draws a request's graph with each node's
state. Every page is checked with axe-core (labels, contrast, roles) and must raise no CSP
violation and no 404 (the favicon). Screenshots of each step go to
.accord/test-artifacts/console/ (printed at the start)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.console.browser_support import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    STEP_TIMEOUT_MS,
    ConsoleMesh,
    assert_fits,
    new_context,
    no_axe_violations,
    require_cjk_font,
    shot,
    sign_in,
)
from tests.mesh.support import token

pytestmark = pytest.mark.timeout(240)

REQUEST = "I changed my mind about the laptop, please refund order O-1004"
NOTE = "verified with the customer by phone"
expect.set_options(timeout=STEP_TIMEOUT_MS)
CASE_KEYS = ("h1", "#queue .case-button", "#facts", "#graph svg", "#approve", "#reject")
# What the orchestrator's developer lines look like ("policy: done (eligible: True, ...)"):
# never on a customer's page.
NODE_LOG = re.compile(
    r"(?m)^(intake|checks|order|policy|risk|decide|approval|refund|explain|rejected|answer): "
)


# A node's duration as the graph writes it ("0.4 s", "12 s", "3 min").
DURATION = re.compile(r"^\d+(\.\d)? (s|min)$")


def _node_state(page: Page, node: str) -> str | None:
    return page.locator(f'#graph g.node[data-node="{node}"]').get_attribute("data-state")


def _node_time(page: Page, node: str) -> Locator:
    return page.locator(f'#graph g.node[data-node="{node}"] text.node-time')


def _open_case(approver: Page, order: str) -> None:
    case = approver.locator("#queue .case-button", has_text=order)
    expect(case).to_be_visible()
    case.focus()
    approver.keyboard.press("Enter")
    expect(approver.locator("#case-heading")).to_be_focused()


def test_refund_approved_in_the_browser(console: ConsoleMesh, browser: Browser) -> None:
    problems: list[str] = []
    customer_ctx, customer = new_context(browser, problems)
    approver_ctx, approver = new_context(browser, problems)
    operator_ctx, operator = new_context(browser, problems)
    try:
        # The approver opens the queue first: the case must arrive without a reload.
        sign_in(approver, console, token("approver-1", "approver"))
        expect(approver).to_have_url(re.compile(r"/approver$"))
        expect(approver.locator("#queue-status")).to_contain_text("Queue checked")
        approver.evaluate("window.__sameDocument = true")
        no_axe_violations(approver, "approver page")
        shot(approver, "1-approver-queue-empty")

        sign_in(customer, console, token("C-03"))
        expect(customer).to_have_url(re.compile(r"/customer$"))
        no_axe_violations(customer, "customer page")
        customer.get_by_label("Your message").fill(REQUEST)
        customer.get_by_role("button", name="Send").click()
        expect(customer.locator("#conversation")).to_contain_text("Waiting for an approver")
        # Plain steps in the page's language, never the orchestrator's node log.
        expect(customer.locator("#progress")).to_contain_text("Reviewing the request: done")
        expect(customer.locator("#progress")).to_contain_text("Review by a person: waiting")
        assert not NODE_LOG.search(customer.locator("#progress").inner_text())
        expect(customer.locator("#earlier")).to_contain_text("O-1004")
        expect(customer.locator("#earlier")).to_contain_text("waiting for an approver")
        shot(customer, "2-customer-waiting")
        # An operator (with the owner's token, as `accord token` mints it) watches the same
        # request's workflow live: waiting at the approval now, the refund done once approved.
        task_id = customer.locator("#earlier li").first.get_attribute("data-task")
        sign_in(operator, console, token("C-03"))
        expect(operator).to_have_url(re.compile(r"/customer$"))
        operator.goto(f"{console.console_url}/workflow?task={task_id}")
        expect(operator.locator('#graph g.node[data-node="approval"]')).to_have_attribute(
            "data-state", "waiting"
        )
        expect(operator.locator('#graph g.node[data-node="refund"]')).to_have_attribute(
            "data-state", "pending"
        )
        expect(operator.locator("#graph-status")).to_contain_text("waiting for an approver")
        # Since when it waits: the log's time of its start. The steps that ended before the
        # page opened have their durations from the log too.
        expect(operator.locator('#graph g.node[data-node="approval"]')).to_contain_text("since ")
        for node in ("intake", "order", "policy", "risk", "decide"):
            expect(_node_time(operator, node)).to_have_text(DURATION)
        shot(operator, "2b-operator-workflow-waiting")

        case = approver.get_by_role("button", name=re.compile("Order O-1004"))
        expect(case).to_be_visible()
        assert approver.evaluate("window.__sameDocument") is True, "the approver page reloaded"
        expect(approver.locator("#queue-news")).to_contain_text("New case: order O-1004")
        case.focus()
        approver.keyboard.press("Enter")
        expect(approver.locator("#case-heading")).to_be_focused()
        facts = approver.locator("#facts")
        shown_facts = ("O-1004", "C-03", "$1,299.00", "high", "large_amount", "within_window")
        # The order's items and the customer's own words, next to the decision.
        for shown in (*shown_facts, "1 x Laptop Pro 16", REQUEST):
            expect(facts).to_contain_text(shown)
        # The case's workflow, drawn from the runtime's graph: every step before the approval
        # done, the approval waiting (with its due time), the ends not run.
        expect(approver.locator('#graph g.node[data-node="approval"]')).to_have_attribute(
            "data-state", "waiting"
        )
        for node in ("intake", "order", "policy", "risk", "decide"):
            assert _node_state(approver, node) == "done", node
            expect(_node_time(approver, node)).to_have_text(DURATION)  # from the queue's events
        for node in ("refund", "explain", "rejected"):
            assert _node_state(approver, node) == "pending", node
        expect(approver.locator('#graph g.node[data-node="approval"]')).to_contain_text("by ")
        no_axe_violations(approver, "approver case")
        assert_fits(approver, "approver case, en, desktop", CASE_KEYS)
        shot(approver, "3-approver-case")
        approver.set_viewport_size(PHONE)
        assert_fits(approver, "approver case, en, phone", CASE_KEYS)
        shot(approver, "3b-approver-case-phone")
        # The same case in Chinese, at both widths.
        approver.goto(console.console_url + "/approver?lang=zh")
        _open_case(approver, "O-1004")
        expect(approver.locator("#facts")).to_contain_text("US$1,299.00")
        expect(approver.locator('#graph g.node[data-node="approval"]')).to_contain_text("等待中")
        assert_fits(approver, "approver case, zh, phone", CASE_KEYS)
        shot(approver, "3c-approver-case-zh-phone")
        approver.set_viewport_size(DESKTOP)
        assert_fits(approver, "approver case, zh, desktop", CASE_KEYS)
        shot(approver, "3d-approver-case-zh")
        approver.goto(console.console_url + "/approver?lang=en")
        _open_case(approver, "O-1004")

        approver.get_by_label(re.compile("^Note")).focus()
        approver.keyboard.type(NOTE)
        approver.keyboard.press("Tab")
        expect(approver.get_by_role("button", name="Approve")).to_be_focused()
        approver.keyboard.press("Enter")
        outcome = approver.locator("#outcome")
        expect(outcome).to_contain_text("approval recorded")
        expect(outcome).to_contain_text("completed (refunded)")
        expect(outcome).to_contain_text(re.compile(r"Receipt \S+ for \$1,299\.00"))
        expect(outcome).to_be_focused()
        expect(approver.locator('#graph g.node[data-node="refund"]')).to_have_attribute(
            "data-state", "done"
        )
        assert _node_state(approver, "approval") == "done"
        # The run went through the approval to the refund, not straight from the decision.
        taken = re.compile(r"\btaken\b")
        expect(approver.locator('#graph g[data-edge="approval>refund"]')).to_have_class(taken)
        expect(approver.locator('#graph g[data-edge="decide>refund"]')).not_to_have_class(taken)
        expect(approver.locator("#queue")).to_contain_text("Nothing waits for a decision")
        shot(approver, "4-approver-decided")
        # The operator's page read the task again and follows it to its end, without a reload.
        expect(operator.locator('#graph g.node[data-node="refund"]')).to_have_attribute(
            "data-state", "done"
        )
        expect(operator.locator('#graph g.node[data-node="approval"]')).to_have_attribute(
            "data-state", "done"
        )
        expect(operator.locator("#graph-status")).to_contain_text("completed")
        # How long the approval waited: from its start to its end, in the log.
        expect(operator.locator('#graph g.node[data-node="approval"]')).to_contain_text(
            re.compile(r"\d(\.\d)? (s|min)")
        )
        shot(operator, "4b-operator-workflow-done")

        receipt = customer.get_by_role("region", name="Receipt")
        expect(receipt).to_be_visible()
        expect(receipt).to_contain_text("O-1004")
        expect(receipt).to_contain_text("$1,299.00")
        receipt_id = receipt.locator("dd").first.inner_text()
        expect(outcome).to_contain_text(receipt_id)  # the approver saw the same receipt
        expect(customer.locator("#earlier")).to_contain_text("completed · refunded")
        expect(customer.locator("#progress")).to_contain_text("Issuing the refund: done")
        no_axe_violations(customer, "customer receipt")
        shot(customer, "5-customer-receipt")

        # The customer tries the approver page: the orchestrator refuses, the page says so.
        customer.goto(console.console_url + "/approver")
        alert = customer.get_by_role("alert")
        expect(alert).to_contain_text("PERMISSION_DENIED")
        expect(customer.locator("#queue button")).to_have_count(0)
        shot(customer, "6-customer-refused-on-approver-page")

        # Chinese, from the switch: the same page in the other language.
        customer.get_by_role("link", name="Switch to Chinese").click()
        expect(customer.locator("html")).to_have_attribute("lang", "zh-CN")
        expect(customer.get_by_role("heading", level=1)).to_have_text("审批")
        shot(customer, "7-zh")
    finally:
        customer_ctx.close()
        approver_ctx.close()
        operator_ctx.close()
    assert not problems, problems
    # Each step left its picture (kept as the test's artifacts).
    shots = sorted(p.name for p in Path(ARTIFACTS).glob("*.png"))
    assert len(shots) >= 6, shots


def test_the_orchestrator_lets_only_the_console_origin_call_it(console: ConsoleMesh) -> None:
    """CORS on the orchestrator: the console's origin may call it (no credentials mode); any
    other page gets no CORS answer, so its browser refuses to read anything."""
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,a2a-version",
    }
    url = console.mesh.orchestrator + "/"
    allowed = httpx.options(url, headers={"Origin": console.console_url, **preflight})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == console.console_url
    assert "access-control-allow-credentials" not in allowed.headers
    assert set(allowed.headers["access-control-allow-methods"].split(", ")) == {"GET", "POST"}
    for other in ("http://127.0.0.1:1", "http://localhost:8720", "null", "https://evil.example"):
        refused = httpx.options(url, headers={"Origin": other, **preflight})
        assert "access-control-allow-origin" not in refused.headers, other
        answer = httpx.get(console.mesh.orchestrator + "/approvals", headers={"Origin": other})
        assert answer.status_code == 401  # and no CORS header: the page cannot even read that
        assert "access-control-allow-origin" not in answer.headers


# C-01's order O-1001 is refunded at once (no approver): the README's first example.
REQUEST_ZH = "鞋码不合适，想退款，订单 O-1001"
SIGNIN_KEYS = ("h1", "#token", "#signin button")
CUSTOMER_KEYS = (
    "h1",
    "#conversation",
    "#message",
    "#send",
    "#progress li",
    ".receipt",
    "#earlier li",
)
WORKFLOW_KEYS = ("h1", "#task", "#open-task button", "#graph svg", "#graph-status")
RAN = ("intake", "checks", "order", "policy", "risk", "decide", "refund")
NOT_RUN = ("approval", "explain", "rejected", "answer")


def _both_widths(page: Page, where: str, keys: tuple[str, ...], name: str) -> None:
    for size, label in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page.set_viewport_size(size)
        assert_fits(page, f"{where}, {label}", keys)
        shot(page, f"{name}-{label}")
    page.set_viewport_size(DESKTOP)


def test_pages_fit_both_widths_in_both_languages_and_the_workflow_draws(
    console: ConsoleMesh, browser: Browser
) -> None:
    require_cjk_font()
    problems: list[str] = []
    context, page = new_context(browser, problems, locale="zh-CN")
    try:
        for lang in ("zh", "en"):
            page.goto(f"{console.console_url}/?lang={lang}")
            expect(page.locator("#sign-out")).to_be_hidden()
            expect(page.locator("#sign-in")).to_be_visible()
            _both_widths(page, f"sign-in, {lang}", SIGNIN_KEYS, f"layout-signin-{lang}")

        # A customer asks in Chinese: plain Chinese steps, money in the page's one format.
        sign_in(page, console, token("C-01"), lang="zh")
        expect(page).to_have_url(re.compile(r"/customer$"))
        expect(page.locator("#sign-out")).to_be_visible()
        expect(page.locator("#sign-in")).to_be_hidden()
        expect(page.locator("#earlier")).to_contain_text("暂无请求")
        page.locator("#message").fill(REQUEST_ZH)
        page.locator("#send").click()
        receipt = page.locator(".receipt")
        expect(receipt).to_contain_text("O-1001")
        expect(receipt).to_contain_text(re.compile(r"US\$\d"))
        progress = page.locator("#progress")
        expect(progress).to_contain_text("办理退款：完成")
        assert not re.search(r"[A-Za-z]{3,}", progress.inner_text()), progress.inner_text()
        # Earlier requests follows the first receipt (it said "no requests yet" before).
        earlier = page.locator("#earlier li").first
        expect(earlier).to_contain_text("已完成 · 已退款")
        no_axe_violations(page, "customer receipt, zh")
        _both_widths(page, "customer, zh", CUSTOMER_KEYS, "layout-customer-zh")
        task_id = earlier.get_attribute("data-task")
        assert task_id

        # The same request's workflow, drawn from the runtime's graph, in both languages.
        for lang in ("zh", "en"):
            page.goto(f"{console.console_url}/workflow?lang={lang}&task={task_id}")
            graph = page.locator("#graph")
            expect(graph.locator('g.node[data-node="refund"]')).to_have_attribute(
                "data-state", "done"
            )
            for node in RAN:
                expect(graph.locator(f'g.node[data-node="{node}"]')).to_have_attribute(
                    "data-state", "done"
                )
            for node in NOT_RUN:
                expect(graph.locator(f'g.node[data-node="{node}"]')).to_have_attribute(
                    "data-state", "pending"
                )
            # Opened after the request ran: every node's duration, from the log's times.
            for node in RAN:
                expect(_node_time(page, node)).to_have_text(DURATION)
            done_word = "完成" if lang == "zh" else "done"
            expect(graph.locator('g.node[data-node="refund"]')).to_contain_text(done_word)
            no_axe_violations(page, f"workflow page, {lang}")
            _both_widths(page, f"workflow, {lang}", WORKFLOW_KEYS, f"layout-workflow-{lang}")

        # The customer page in English after a reload: the earlier request, in English.
        page.goto(f"{console.console_url}/customer?lang=en")
        expect(page.locator("#earlier li").first).to_contain_text("completed · refunded")
        _both_widths(
            page, "customer, en", ("h1", "#message", "#send", "#earlier li"), "layout-customer-en"
        )
    finally:
        context.close()
    assert not problems, problems


def test_every_page_names_an_icon_that_is_served(console: ConsoleMesh) -> None:
    for path in ("/", "/customer", "/approver", "/workflow"):
        page = httpx.get(console.console_url + path)
        icon = re.search(r'<link rel="icon" href="([^"]+)"', page.text)
        assert icon, path
        answer = httpx.get(urljoin(console.console_url + path, icon.group(1)))
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("image/svg+xml")
