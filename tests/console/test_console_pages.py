"""The console server in-process: what every page carries (CSP, no inline script), the language
choice, and that it has no route that does anything (every call goes to the orchestrator)."""

from __future__ import annotations

import re

import httpx
import pytest

from accord.agents.console.app import PAGES, ConsoleConfig, build_console_app
from accord.agents.console.language import WORDS, choose, from_accept_language

ORCHESTRATOR = "http://127.0.0.1:8700"


@pytest.fixture
def client() -> httpx.AsyncClient:
    app = build_console_app(ConsoleConfig(orchestrator_url=ORCHESTRATOR))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://console")


@pytest.mark.parametrize("path", list(PAGES))
async def test_every_page_has_a_strict_policy_and_no_inline_script(
    client: httpx.AsyncClient, path: str
) -> None:
    async with client:
        page = await client.get(path)
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp
    assert f"connect-src 'self' {ORCHESTRATOR}" in csp
    assert "unsafe-inline" not in csp
    assert "unsafe-eval" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, re.S)
    for attrs, body in scripts:
        # Either a file of ours, or a JSON data block (never run by the browser).
        assert 'src="' in attrs or 'type="application/json"' in attrs, attrs
        assert body.strip() == "" or 'type="application/json"' in attrs
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", page.text), "an inline event handler"
    assert not re.search(r"<[^>]*\sstyle\s*=", page.text), "an inline style"
    assert f'data-orchestrator="{ORCHESTRATOR}"' in page.text


async def test_only_pages_static_files_and_health_are_served(client: httpx.AsyncClient) -> None:
    async with client:
        for method, path in (("POST", "/"), ("POST", "/customer"), ("GET", "/approvals")):
            answer = await client.request(method, path)
            assert answer.status_code in (404, 405), (method, path)
        assert (await client.get("/static/a2a.js")).status_code == 200
        assert (await client.get("/healthz")).json()["status"] == "ok"


async def test_the_language_follows_the_browser_and_the_switch_sticks(
    client: httpx.AsyncClient,
) -> None:
    async with client:
        zh = await client.get("/customer", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"})
        assert '<html lang="zh-CN">' in zh.text
        assert WORDS["customer_heading"][1] in zh.text
        switched = await client.get("/customer?lang=en", headers={"Accept-Language": "zh-CN"})
        assert '<html lang="en">' in switched.text
        # The cookie the switch set wins over the browser's order on the next page.
        again = await client.get("/approver", headers={"Accept-Language": "zh-CN"})
        assert '<html lang="en">' in again.text


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("", "en"),
        ("fr-FR, de", "en"),
        ("zh-TW", "zh"),
        ("en;q=0.4, zh;q=0.8", "zh"),
        ("zh;q=0, en", "en"),
        ("en-GB,zh-CN", "en"),
    ],
)
def test_accept_language(header: str, expected: str) -> None:
    assert from_accept_language(header) == expected


def test_the_switch_wins_over_cookie_and_browser() -> None:
    assert choose("zh", "en", "en") == "zh"
    assert choose("xx", "zh", "en") == "zh"
    assert choose(None, None, "zh") == "zh"
