"""One money format per language: the Python formatter (CLI, answers, receipts) and the
console's session.js money() write the same text, and that text is Intl's."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Final

import pytest

from accord.agents.models.base import Language
from accord.agents.models.money_text import format_money, money

SESSION_JS: Final = (
    Path(__file__).resolve().parents[3] / "agents/accord/agents/console/static/session.js"
)
CASES: Final = [
    (129900, "USD"),
    (3500, "USD"),
    (5, "USD"),
    (0, "USD"),
    (123456789, "USD"),
    (5999, "CNY"),
    (5999, "EUR"),
    (5999, "GBP"),
    (5999, "HKD"),
    (5999, "XYZ"),
    (5999, None),
]


@pytest.mark.parametrize(
    ("cents", "currency", "language", "expected"),
    [
        (129900, "USD", Language.EN, "$1,299.00"),
        (129900, "USD", Language.ZH, "US$1,299.00"),
        (3500, "usd", Language.EN, "$35.00"),
        (5, "USD", Language.ZH, "US$0.05"),
        (5999, "CNY", Language.EN, "CN¥59.99"),
        (5999, "CNY", Language.ZH, "¥59.99"),
        (5999, None, Language.EN, "$59.99"),
        (5999, "XYZ", Language.EN, "XYZ\u00a059.99"),
        (-1050, "USD", Language.EN, "-$10.50"),
    ],
)
def test_one_format_per_language(
    cents: int, currency: str | None, language: Language, expected: str
) -> None:
    assert format_money(cents, currency, language) == expected


def test_none_stays_none_for_a_placeholder() -> None:
    assert money(None, "USD", Language.EN) is None
    assert money(1, "USD", Language.EN) == "$0.01"


def _console_money(lang: str) -> list[str]:
    """session.js's own money() in node, the page's language set on a stand-in document."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the console's formatter runs in node here)")
    script = f"""
globalThis.document = {{
  getElementById: () => ({{ textContent: "{{}}" }}),
  body: {{ dataset: {{ lang: {json.dumps(lang)} }} }},
}};
const src = require("fs").readFileSync({json.dumps(str(SESSION_JS))}, "utf8");
import("data:text/javascript;base64," + Buffer.from(src).toString("base64")).then((m) => {{
  const cases = {json.dumps(CASES)};
  console.log(JSON.stringify(cases.map(([c, cur]) => m.money(c, cur))));
}});
"""
    done = subprocess.run(
        [node, "-e", script], capture_output=True, text=True, timeout=30, check=True
    )
    return list(json.loads(done.stdout))


@pytest.mark.parametrize(("page_lang", "language"), [("en", Language.EN), ("zh", Language.ZH)])
def test_the_console_writes_money_as_the_agents_do(page_lang: str, language: Language) -> None:
    expected = [format_money(cents, currency, language) for cents, currency in CASES]
    assert _console_money(page_lang) == expected
