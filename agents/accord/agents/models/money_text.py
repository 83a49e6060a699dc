"""An amount as a person reads it: the one money format of each language, everywhere.

The CLI, the agents' answers and the web console write money the same way. The console
formats with the browser's ``Intl.NumberFormat`` (console/static/session.js: locale ``en`` or
``zh-CN``, style ``currency``); this module writes what Intl writes for those two locales, so
``129900`` cents in USD reads ``$1,299.00`` in English and ``US$1,299.00`` in Chinese wherever
it is shown (tests/agents/models/test_money_text.py compares both with node's Intl).

Amounts are integer minor units (cents) of a two-decimal currency, as every contract carries
them; a person never sees the cents themselves.
"""

from __future__ import annotations

from typing import Final

from accord.agents.models.base import Language

DEFAULT_CURRENCY: Final = "USD"  # the console's default too (session.js)

# Intl's symbols (CLDR) for the two-decimal currencies; any other code is written before the
# number with a no-break space, as Intl writes an unknown one ("XYZ 1,299.00").
_SYMBOLS: Final[dict[Language, dict[str, str]]] = {
    Language.EN: {
        "USD": "$",
        "CNY": "CN¥",
        "EUR": "€",
        "GBP": "£",
        "HKD": "HK$",
        "AUD": "A$",
        "CAD": "CA$",
        "INR": "₹",
        "TWD": "NT$",
    },
    Language.ZH: {
        "USD": "US$",
        "CNY": "¥",
        "EUR": "€",
        "GBP": "£",
        "HKD": "HK$",
        "AUD": "AU$",
        "CAD": "CA$",
        "INR": "₹",
        "TWD": "NT$",
    },
}


def format_money(cents: int, currency: str | None, language: Language) -> str:
    """``129900, "USD", EN`` -> ``$1,299.00``; ``ZH`` -> ``US$1,299.00``."""
    code = (currency or DEFAULT_CURRENCY).upper()
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    number = f"{whole:,}.{part:02d}"
    symbol = _SYMBOLS[language].get(code)
    return f"{sign}{symbol}{number}" if symbol else f"{sign}{code}\u00a0{number}"


def money(cents: int | None, currency: str | None, language: Language) -> str | None:
    """:func:`format_money`, None staying None (a sentence then shows its placeholder)."""
    return None if cents is None else format_money(cents, currency, language)
