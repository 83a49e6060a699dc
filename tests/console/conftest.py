"""The mesh, the console and the browser of a browser test module (starting the mesh takes
30-45 s on two shared cores, so a module's tests share them and use their own customers and
orders). Per module, not per session: a module runs on one xdist worker (--dist loadfile), and
Playwright's sync API must be closed before another module's asyncio tests run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.console.browser_support import ARTIFACTS, ConsoleMesh, chromium_path, running_console


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleMesh]:
    chromium_path()  # skip before starting anything when there is no browser
    print(f"\nconsole screenshots: {ARTIFACTS}")
    with running_console(tmp_path_factory.mktemp("console")) as started:
        yield started


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        # As root the sandbox must be off; the browser only loads our own local pages.
        launched = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield launched
        launched.close()
