"""Text as a model run reads it: cleaned the same way before rules, cache keys and routing.

Unicode NFKC (full-width letters and digits become ASCII), curly apostrophes become ``'``,
format characters (zero-width spaces, direction marks) are dropped, control characters become
spaces, white space collapses. A text longer than ``MAX_TEXT_CHARS`` is refused before any of
that (PAYLOAD_TOO_LARGE), so no pattern ever runs over an unbounded input.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from accord.contracts.errors import AccordError, ErrorCode

MAX_TEXT_CHARS: Final = 16_000
_QUOTES: Final = str.maketrans({"’": "'", "‘": "'", "＇": "'", "`": "'"})
_WS: Final = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """NFKC, drop format characters, controls to spaces, collapse white space, strip."""
    if len(text) > MAX_TEXT_CHARS:
        raise AccordError(
            ErrorCode.PAYLOAD_TOO_LARGE,
            f"the message is {len(text)} characters; the limit is {MAX_TEXT_CHARS}",
            {"field": "text", "limit": MAX_TEXT_CHARS},
        )
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    if text.isprintable():  # the common case: no control, format or odd separator characters
        return _WS.sub(" ", text).strip()
    out: list[str] = []
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cf":  # zero-width and direction marks: "A-10\u200b01" is "A-1001"
            continue
        out.append(" " if category in ("Cc", "Cs", "Co", "Zl", "Zp") else ch)
    return _WS.sub(" ", "".join(out)).strip()


def normalize_question(text: str) -> str:
    """The comparable form of a question for cache keys: cleaned and case-folded."""
    return clean_text(text).casefold()
