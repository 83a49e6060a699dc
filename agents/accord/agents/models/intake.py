"""Rules and patterns that read a refund request in Chinese or English, deterministically.

Text is first made comparable (:func:`clean_text`: NFKC, so full-width "Ｏ－１００１" is
"O-1001"; format characters such as zero-width spaces dropped; control characters and runs of
white space collapsed to one space). Then each field has its own small pattern table. The text
is only ever data: nothing in it can make the intent ``approve`` unless the workflow is waiting
for an approval decision, and even then the orchestrator checks the approver's credential.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final, TypeVar

from accord.agents.models.base import (
    MAX_FIELD_CHARS,
    MAX_ORDER_DIGITS,
    Expecting,
    Intake,
    IntakeContext,
    Intent,
    Language,
    Missing,
)
from accord.contracts.domain import RefundReason
from accord.contracts.errors import AccordError, ErrorCode

_T = TypeVar("_T")

MAX_TEXT_CHARS: Final = 16_000
"""Longer messages are refused (PAYLOAD_TOO_LARGE) rather than silently cut."""

_QUOTES: Final = str.maketrans({"’": "'", "‘": "'", "＇": "'", "`": "'"})
_DASHES: Final = "-‐‑‒–—―−﹣"
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
        if category == "Cf":  # zero-width and direction marks: "O-10\u200b01" is "O-1001"
            continue
        out.append(" " if category in ("Cc", "Cs", "Co", "Zl", "Zp") else ch)
    return _WS.sub(" ", "".join(out)).strip()


def normalize_question(text: str) -> str:
    """The comparable form of a question for cache keys: cleaned and case-folded."""
    return clean_text(text).casefold()


# -- order ids ---------------------------------------------------------------------------------

_ORDER_ID: Final = re.compile(
    rf"(?<![A-Za-z0-9])[Oo]\s?[{_DASHES}]\s?([0-9]{{1,{MAX_ORDER_DIGITS}}})(?![0-9])"
)
# A bare number counts only right after an order keyword: "order #1001", "订单号：1001".
_ORDER_NUMBER: Final = re.compile(
    r"(?:\border(?:\s+(?:number|no\.?|id))?|订单(?:号|编号)?)\s?(?:is\s)?[#:：]?\s?"
    rf"([0-9]{{3,{MAX_ORDER_DIGITS}}})(?![0-9])",
    re.IGNORECASE,
)


def find_order_ids(text: str) -> list[str]:
    """Distinct order ids in order of appearance, as ``O-<digits>``."""
    found: list[tuple[int, str]] = [(m.start(), m.group(1)) for m in _ORDER_ID.finditer(text)]
    found += [(m.start(), m.group(1)) for m in _ORDER_NUMBER.finditer(text)]
    return _distinct(f"O-{digits}" for _, digits in sorted(found))


# -- reasons -----------------------------------------------------------------------------------

_REASONS: Final[tuple[tuple[RefundReason, re.Pattern[str]], ...]] = (
    (
        RefundReason.NOT_AS_DESCRIBED,
        re.compile(
            r"与描述不符|和描述不符|描述不符|与图片不符|和图片不一样|货不对板|发错|不是我(?:买|订)的"
            r"|not as described|not what i ordered|wrong item"
            r"|different from (?:the )?(?:description|picture|photo|listing)"
            r"|(?:doesn't|does not|didn't|did not) match (?:the )?(?:description|picture|photo)"
        ),
    ),
    (
        RefundReason.WRONG_SIZE,
        re.compile(
            r"尺码|鞋码|码数|尺寸不|不合适|不合身|太大|太小|偏大|偏小|穿不下|穿不了"
            r"|wrong size|(?:doesn't|does not|didn't|did not|don't|do not) fit|not fit"
            r"|too (?:big|small|large|tight|loose|long|short)\b|size (?:is )?wrong"
        ),
    ),
    (
        RefundReason.DAMAGED,
        re.compile(
            r"损坏|破损|破了|碎了|坏了|摔坏|裂|瑕疵|划痕|破|碎|坏"
            r"|broken|damaged|cracked|shattered|smashed|defective|torn|scratched|dented"
            r"|faulty|(?:doesn't|does not) work|stopped working"
        ),
    ),
    (
        RefundReason.CHANGED_MIND,
        re.compile(
            r"不想要|不要了|改变主意|改主意|不需要了|不喜欢"
            r"|changed my mind|change of mind|(?:don't|do not) (?:want|need|like) it"
            r"|no longer (?:want|need)"
        ),
    ),
    (
        RefundReason.LATE_DELIVERY,
        re.compile(
            r"迟到|没收到|未收到|还没到|没到货|还没收到|太慢|延迟|晚到|迟迟"
            r"|\blate\b|never arrived|(?:hasn't|has not|didn't|did not|haven't) (?:arrived|come)"
            r"|not (?:arrived|received)|never (?:received|came)|(?:haven't|have not) received"
            r"|delayed|still waiting"
        ),
    ),
)
# A match right after a negation does not count: "not broken", "没坏", "isn't damaged".
_NEGATION_EN: Final = re.compile(r"(?:\bnot|n't|\bnever|\bno)\s+(?:\w+\s+)?$")
_NEGATION_ZH: Final = ("没有", "不是", "并非", "并没", "没", "未", "无")


def _negated(text: str, start: int) -> bool:
    before = text[max(0, start - 24) : start]
    return bool(_NEGATION_EN.search(before)) or before.rstrip().endswith(_NEGATION_ZH)


def find_reasons(folded: str) -> list[RefundReason]:
    """Distinct reasons in order of first (non-negated) mention."""
    first: dict[RefundReason, int] = {}
    # Earlier rows win overlapping spans ("描述不符" is not also a bare "不..."); a byte per
    # character keeps the overlap check linear in the text, whatever it contains.
    taken = bytearray(len(folded))
    for reason, pattern in _REASONS:
        for m in pattern.finditer(folded):
            if any(taken[m.start() : m.end()]):
                continue
            taken[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
            if reason not in first and not _negated(folded, m.start()):
                first[reason] = m.start()
    return sorted(first, key=first.__getitem__)


# -- intent, evidence, language ----------------------------------------------------------------

_REFUND: Final = re.compile(
    r"退款|退货|退钱|退回|退掉|退费|要退|想退|申请退|退一下|返还"
    r"|\brefund|\bmoney back\b|\breturn(?:ed|ing)?\b|\breimburs|\bcharge ?back\b"
)
_APPROVE: Final = re.compile(
    r"^(?:i )?(?:approve[ds]?|yes|ok(?:ay)?|同意|批准|通过|可以)\b|^(?:同意|批准)"
)
_NOT_APPROVE: Final = re.compile(
    r"\b(?:not|don't|do not|never|reject|deny|decline)\b|不同意|不批准|拒绝|驳回|不行|不可以"
)
_INJECTION: Final = re.compile(
    r"ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules)"
    r"|system prompt|you are now|developer mode|disregard (?:the )?(?:rules|instructions)"
    r"|忽略(?:之前|以上|前面|上面)?的?(?:所有)?(?:指令|指示|规则)|系统提示"
)
# Bounded and anchored at a token start, so a long run of "-" or letters cannot backtrack badly.
_PHOTO: Final = re.compile(
    r"(?:https?://[^\s/]{1,255}/\S{0,300}?|(?<![\w.-])[\w.-]{1,120})"
    r"\.(?:jpe?g|png|heic|webp|gif|mp4|mov)\b",
    re.IGNORECASE,
)
_HAN: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN: Final = re.compile(r"[A-Za-z]")


def find_evidence(text: str) -> str | None:
    """A photo or video reference ("photo: IMG_1234.jpg", a URL) is evidence."""
    refs = _distinct(m.group(0) for m in _PHOTO.finditer(text))
    return ", ".join(refs)[:MAX_FIELD_CHARS] if refs else None


def detect_language(text: str) -> Language | None:
    """zh when Han characters outweigh Latin letters (one Han ~ three letters); None if neither."""
    plain = _PHOTO.sub(" ", _ORDER_ID.sub(" ", text))
    han, latin = len(_HAN.findall(plain)), len(_LATIN.findall(plain))
    if han == 0 and latin == 0:
        return None
    return Language.ZH if han * 3 >= latin else Language.EN


def looks_like_injection(text: str) -> bool:
    return bool(_INJECTION.search(text.casefold()))


# -- questions ---------------------------------------------------------------------------------

_ASK_ORDER: Final = {
    Language.EN: "What is your order number? (e.g. O-1001)",
    Language.ZH: "请提供订单号（例如 O-1001）",
}
_ASK_WHICH: Final = {
    Language.EN: "You mentioned several orders ({ids}). Which one is this refund for?",
    Language.ZH: "您提到了多个订单（{ids}），请问要为哪一个退款？",
}
_ASK_REASON: Final = {
    Language.EN: "Why would you like a refund? (wrong size, damaged, not as described, "
    "changed your mind, or late delivery)",
    Language.ZH: "请问退款原因是什么？（尺码不合适、商品损坏、与描述不符、不想要了或物流延迟）",
}
_OFFER_HELP: Final = {
    Language.EN: "I can help with refunds. Please tell me your order number and what went wrong.",
    Language.ZH: "我可以帮您办理退款，请告诉我订单号和遇到的问题。",
}


def question_for(missing: Missing, language: Language, ambiguous: list[str] | None = None) -> str:
    if missing is Missing.ORDER_ID and ambiguous:
        sep = "、" if language is Language.ZH else ", "
        return _ASK_WHICH[language].format(ids=sep.join(ambiguous[:5]))
    return (_ASK_ORDER if missing is Missing.ORDER_ID else _ASK_REASON)[language]


def help_offer(language: Language) -> str:
    return _OFFER_HELP[language]


def missing_of(
    intake_intent: Intent, order_id: str | None, reason: RefundReason | None
) -> list[Missing]:
    """Missing fields follow from the others; no model decides them."""
    if intake_intent is not Intent.REFUND:
        return []
    return [m for m, v in ((Missing.ORDER_ID, order_id), (Missing.REASON, reason)) if v is None]


# -- the whole reading -------------------------------------------------------------------------


def read_intake(text: str, context: IntakeContext | None = None) -> Intake:
    """The deterministic reading of one message, merged with what the context established."""
    ctx = context or IntakeContext()
    prev = ctx.previous
    clean = clean_text(text)
    folded = clean.casefold()
    orders = find_order_ids(clean)
    reasons = find_reasons(folded)
    evidence = find_evidence(clean)
    language = (
        detect_language(clean) or ctx.language or (prev.language if prev else None) or Language.EN
    )

    if ctx.expecting is Expecting.EVIDENCE and evidence is None and clean and not orders:
        evidence = clean[:MAX_FIELD_CHARS]  # a description given when asked for evidence
    reason = reasons[0] if reasons else (prev.reason if prev else None)
    if reason is None and ctx.expecting is Expecting.REASON and clean and not orders:
        reason = RefundReason.OTHER  # they answered the question; we just cannot classify it

    if ctx.expecting is Expecting.APPROVAL and _is_approval(folded):
        intent = Intent.APPROVE
    elif _REFUND.search(folded) or reasons or (prev is not None and prev.intent is Intent.REFUND):
        intent = Intent.REFUND
    else:
        intent = Intent.OTHER

    order_id = orders[0] if len(orders) == 1 else None
    if not orders and prev is not None:
        order_id = prev.order_id
    evidence = evidence or (prev.evidence if prev else None)
    missing = missing_of(intent, order_id, reason)
    question: str | None = None
    if missing:
        question = question_for(missing[0], language, orders if len(orders) > 1 else None)
    elif intent is Intent.OTHER:
        question = help_offer(language)
    return Intake(
        intent=intent,
        order_id=order_id,
        reason=reason,
        evidence=evidence,
        language=language,
        missing=missing,
        question=question,
    )


def _is_approval(folded: str) -> bool:
    return (
        bool(_APPROVE.search(folded))
        and not _NOT_APPROVE.search(folded)
        and not looks_like_injection(folded)
    )


def _distinct(items: Iterable[_T]) -> list[_T]:
    return list(dict.fromkeys(items))
