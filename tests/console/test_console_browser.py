"""The console in a real browser (Debian's headless Chromium, driven by Playwright for Python):
a customer asks for a refund in one browser context, an approver in another sees the case
appear without reloading, opens it and approves it with a note (by keyboard), the customer's
page shows the receipt, and a customer who opens the approver page is refused by the API.
Every page is checked with axe-core (labels, contrast, roles) and must raise no CSP violation.
Screenshots of each step go to .accord/test-artifacts/console/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.console.browser_support import ARTIFACTS, ConsoleMesh, chromium_path, running_console
from tests.mesh.support import token

pytestmark = pytest.mark.timeout(180)

REQUEST = "I changed my mind about the laptop, please refund order O-1004"
NOTE = "verified with the customer by phone"
STEP_TIMEOUT_MS = 20_000
expect.set_options(timeout=STEP_TIMEOUT_MS)


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleMesh]:
    chromium_path()  # skip before starting anything when there is no browser
    with running_console(tmp_path_factory.mktemp("console")) as started:
        yield started


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        # As root the sandbox must be off; the browser only loads our own local pages.
        launched = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield launched
        launched.close()


def _context(browser: Browser, problems: list[str]) -> tuple[BrowserContext, Page]:
    context = browser.new_context(locale="en-US", viewport={"width": 1200, "height": 800})
    page = context.new_page()
    page.set_default_timeout(STEP_TIMEOUT_MS)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_console(message: object) -> None:
        text = getattr(message, "text", "")
        if getattr(message, "type", "") == "error" and "Content Security Policy" in text:
            problems.append(text)

    page.on("console", on_console)
    return context, page


def _sign_in(page: Page, console: ConsoleMesh, bearer: str) -> None:
    page.goto(console.console_url + "/?lang=en")
    field = page.get_by_label("Token")
    expect(field).to_be_focused()  # the page puts the keyboard where the work is
    page.keyboard.insert_text(bearer)
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # the Sign in button, by keyboard


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _no_axe_violations(page: Page, where: str) -> None:
    results = Axe().run(page)
    found = [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
    ]
    assert not found, f"{where}: {found}"


def test_refund_approved_in_the_browser(console: ConsoleMesh, browser: Browser) -> None:
    problems: list[str] = []
    customer_ctx, customer = _context(browser, problems)
    approver_ctx, approver = _context(browser, problems)
    try:
        # The approver opens the queue first: the case must arrive without a reload.
        _sign_in(approver, console, token("approver-1", "approver"))
        expect(approver).to_have_url(re.compile(r"/approver$"))
        expect(approver.locator("#queue-status")).to_contain_text("Queue checked")
        approver.evaluate("window.__sameDocument = true")
        _no_axe_violations(approver, "approver page")
        _shot(approver, "1-approver-queue-empty")

        _sign_in(customer, console, token("C-03"))
        expect(customer).to_have_url(re.compile(r"/customer$"))
        _no_axe_violations(customer, "customer page")
        customer.get_by_label("Your message").fill(REQUEST)
        customer.get_by_role("button", name="Send").click()
        expect(customer.locator("#conversation")).to_contain_text("Waiting for an approver")
        expect(customer.locator("#progress")).to_contain_text("risk: done")
        expect(customer.locator("#earlier")).to_contain_text("O-1004")
        _shot(customer, "2-customer-waiting")

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
        _no_axe_violations(approver, "approver case")
        _shot(approver, "3-approver-case")

        approver.get_by_label(re.compile("^Note")).focus()
        approver.keyboard.type(NOTE)
        approver.keyboard.press("Tab")
        expect(approver.get_by_role("button", name="Approve")).to_be_focused()
        approver.keyboard.press("Enter")
        outcome = approver.locator("#outcome")
        expect(outcome).to_contain_text("approve recorded")
        expect(outcome).to_contain_text("refunded")
        expect(outcome).to_be_focused()
        expect(approver.locator("#queue")).to_contain_text("Nothing waits for a decision")
        _shot(approver, "4-approver-decided")

        receipt = customer.get_by_role("region", name="Receipt")
        expect(receipt).to_be_visible()
        expect(receipt).to_contain_text("O-1004")
        expect(receipt).to_contain_text("$1,299.00")
        expect(customer.locator("#earlier")).to_contain_text("refunded")
        _no_axe_violations(customer, "customer receipt")
        _shot(customer, "5-customer-receipt")

        # The customer tries the approver page: the orchestrator refuses, the page says so.
        customer.goto(console.console_url + "/approver")
        alert = customer.get_by_role("alert")
        expect(alert).to_contain_text("PERMISSION_DENIED")
        expect(customer.locator("#queue button")).to_have_count(0)
        _shot(customer, "6-customer-refused-on-approver-page")

        # Chinese, from the switch: the same page in the other language.
        customer.get_by_role("link", name="Switch to Chinese").click()
        expect(customer.locator("html")).to_have_attribute("lang", "zh-CN")
        expect(customer.get_by_role("heading", level=1)).to_have_text("审批")
        _shot(customer, "7-zh")
    finally:
        customer_ctx.close()
        approver_ctx.close()
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
