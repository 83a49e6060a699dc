"""What the browser tests share: the system Chromium (never a downloaded one), the console as a
real process next to a real mesh, a browser context that records what went wrong (page errors,
CSP violations, any answer 404), signing in, axe-core, layout checks, and where screenshots go
(``ARTIFACTS``, printed by the tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, Response, expect

from tests.mesh.support import Mesh, running_mesh
from tests.support.processes import free_port, wait_healthy

ROOT: Final = Path(__file__).resolve().parents[2]
ARTIFACTS: Final = ROOT / ".accord" / "test-artifacts" / "console"
CHROMIUM_NAMES: Final = ("chromium", "chromium-browser")
STEP_TIMEOUT_MS: Final = 20_000
DESKTOP: Final = {"width": 1280, "height": 800}
PHONE: Final = {"width": 375, "height": 740}
# Debian's package of Chinese glyphs (.ci/run installs it; docs/console.md names it).
CJK_FONT_PACKAGE: Final = "fonts-noto-cjk"


def chromium_path() -> str:
    """Debian's chromium; skip without it locally, fail on CI (.ci/run installs it)."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium must be installed on CI (.ci/run: apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install -y chromium)")


def require_cjk_font() -> None:
    """A font with Chinese glyphs (else every character of the zh pages is a box): fail on CI
    without it, skip elsewhere."""
    listed = (
        subprocess.run(
            ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False
        )
        if shutil.which("fc-list")
        else None
    )
    if listed is not None and listed.stdout.strip():
        return
    if os.environ.get("CI"):
        pytest.fail(
            f"a CJK font must be installed on CI (.ci/run: apt-get install {CJK_FONT_PACKAGE})"
        )
    pytest.skip(f"no CJK font (apt-get install -y {CJK_FONT_PACKAGE})")


@dataclass
class ConsoleMesh:
    mesh: Mesh
    console_url: str


@contextmanager
def running_console(base: Path) -> Iterator[ConsoleMesh]:
    """The five services and `accord console`, the orchestrator allowing the console's origin."""
    console_url = f"http://127.0.0.1:{free_port()}"
    allow = {"ACCORD_CONSOLE_URL": console_url}
    with running_mesh(base, orchestrator_env=allow) as mesh:
        log_path = mesh.log_dir / "console.log"
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "accord.cli.main", "console"],
                env={**os.environ, **mesh.env, **allow},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            wait_healthy(console_url, proc, deadline_s=30.0)
            yield ConsoleMesh(mesh, console_url)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def new_context(
    browser: Browser, problems: list[str], locale: str = "en-US"
) -> tuple[BrowserContext, Page]:
    """A browser context whose page errors, CSP violations and 404 answers land in ``problems``."""
    context = browser.new_context(locale=locale, viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(STEP_TIMEOUT_MS)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_console(message: object) -> None:
        text = getattr(message, "text", "")
        if getattr(message, "type", "") == "error" and "Content Security Policy" in text:
            problems.append(text)

    def on_response(response: Response) -> None:
        if response.status == 404:
            problems.append(f"404: {response.url}")

    page.on("console", on_console)
    page.on("response", on_response)
    return context, page


def sign_in(page: Page, console: ConsoleMesh, bearer: str, lang: str = "en") -> None:
    page.goto(f"{console.console_url}/?lang={lang}")
    field = page.locator("#token")
    expect(field).to_be_focused()  # the page puts the keyboard where the work is
    expect(page.locator("#sign-out")).to_be_hidden()  # nobody to sign out yet
    page.keyboard.insert_text(bearer)
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # the Sign in button, by keyboard


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def no_axe_violations(page: Page, where: str) -> None:
    results = Axe().run(page)
    found = [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
    ]
    assert not found, f"{where}: {found}"


# Each key element: in the viewport horizontally, with a size, and visible.
_BOXES_JS = """(selectors) => selectors.flatMap((selector) =>
  [...document.querySelectorAll(selector)].filter((e) => e.checkVisibility()).map((e) => {
    const r = e.getBoundingClientRect();
    return {selector, text: (e.textContent || "").trim().slice(0, 40),
            left: r.left, right: r.right, top: r.top, width: r.width, height: r.height};
  }))"""


# The room between each heading of the page and what it heads (the next element that shows
# something).
_HEADING_GAPS_JS = """() => [...document.querySelectorAll("main h1, main h2, main h3")]
  .filter((h) => h.checkVisibility())
  .map((h) => {
    let next = h.nextElementSibling;
    // Skipped: what is hidden, has no height, or shows nothing (an empty alert is a band).
    const shows = (e) => e.checkVisibility() && e.getBoundingClientRect().height > 0
      && (e.textContent.trim() || e.querySelector("*"));
    while (next && !shows(next)) {
      next = next.nextElementSibling;
    }
    return next ? {heading: h.textContent.trim(),
                   gap: next.getBoundingClientRect().top - h.getBoundingClientRect().bottom} : null;
  })
  .filter(Boolean)"""
MAX_HEADING_GAP_PX: Final = 28


def assert_fits(page: Page, where: str, keys: tuple[str, ...]) -> None:
    """Nothing overflows the viewport horizontally, every key element is visible inside it, the
    header's pages sit on one line (the header does not wrap), and no heading has a blank band
    under it."""
    width = page.evaluate("window.innerWidth")
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{where}: the page is {scroll} px wide in a {width} px viewport"
    for selector in keys:
        expect(page.locator(selector).first).to_be_visible()
    boxes = page.evaluate(_BOXES_JS, ["header nav a", "header .account", ".brand", *keys])
    for box in boxes:
        assert min(box["width"], box["height"]) > 0, f"{where}: {box} has no size"
        assert box["left"] >= -0.5, f"{where}: {box} overflows on the left"
        assert box["right"] <= width + 0.5, f"{where}: {box} overflows on the right"
    tops = {round(b["top"]) for b in boxes if b["selector"] == "header nav a"}
    assert len(tops) == 1, f"{where}: the header's pages wrap onto {len(tops)} lines"
    for gap in page.evaluate(_HEADING_GAPS_JS):
        assert gap["gap"] <= MAX_HEADING_GAP_PX, f"{where}: a blank band under {gap}"
    header = page.locator("header").bounding_box()
    assert header is not None
    assert header["height"] <= 96, f"{where}: the header is {header['height']} px high"
