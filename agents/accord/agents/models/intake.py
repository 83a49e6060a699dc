"""Rules and patterns that read a refund request in Chinese or English, deterministically.

Text is first made comparable (the framework's ``clean_text``, accord.runtime.models.text:
NFKC, so full-width "Ｏ－１００１" is "O-1001"; format characters such as zero-width spaces
dropped; control characters and runs of white space collapsed to one space). Then each field
has its own small pattern table. The text is only ever data: nothing in it can make the intent
``approve`` unless the workflow is waiting for an approval decision, and even then the
orchestrator checks the approver's credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
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
    RequestedAmount,
)
from accord.refund_contracts.domain import RefundReason
from accord.runtime.models.text import clean_text

_T = TypeVar("_T")

_DASHES: Final = "-‐‑‒–—―−﹣"


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


# "I don't want a refund", "我不是要退款": the customer says what this is NOT. A refund word
# right after a refusal of it; a bare "not" before something else ("a refund, not a
# replacement") or a complaint ("I didn't get my refund") is not one.
_NO_REFUND: Final = re.compile(
    r"\b(?:don't|do not|doesn't|does not|am not|i'm not|not|no longer|never)\s+"
    r"(?:really\s+|actually\s+)?(?:want|need|asking for|ask for|requesting|request|looking for"
    r"|after|seeking|trying to get)\s+(?:a\s+|any\s+|the\s+|to\s+|my\s+)?"
    r"(?:refund|return|money back)"
    r"|\bnot (?:about )?a refund\b|\bno refunds? (?:needed|necessary|please|wanted)\b"
    r"|\bnever ?mind\b|\bforget (?:about )?(?:it|the refund)\b|\bcancel (?:the|my) refund"
    r"|(?:不是|并不是|并非)(?:要|想|想要|需要|打算|申请)?(?:退款|退货|退钱)"
    r"|不(?:要|想|想要|需要|打算|申请)(?:退款|退货|退钱|退了)"
    r"|(?:不用|无需|不必)(?:退款|退货|退钱|退了)|不退了|不退款了|算了|不用了"
)
# A question: a question mark at the end, a question word first, or words that ask to look
# something up. Only read when the message asks for no refund (a refund word wins).
_QUESTION: Final = re.compile(
    r"[?？]\s*$|^(?:what|where|when|how|why|who|which|is|are|was|can|could|do|does|did|will"
    r"|would)\b|\b(?:just checking|just asking|wondering|check on|checking on|track(?:ing)?"
    r"|status of|where is|shipping|shipment|delivery status)\b"
    r"|吗\s*$|呢\s*$|请问|想问|问一下|问问|查一下|查询|物流|快递|到哪|什么时候|几时|怎么样|天气"
)

# -- amounts ----------------------------------------------------------------------------------

_MONEY: Final = r"([0-9]{1,7}(?:\.[0-9]{1,2})?)"
_AMOUNT_CENTS: Final = re.compile(
    rf"(?:\$|\busd ?|[￥¥])\s?{_MONEY}(?![0-9])"
    rf"|(?<![0-9.-]){_MONEY}\s?(?:dollars?\b|bucks\b|usd\b|块钱|块|元|美元|美金|刀)"
)
_AMOUNT_PERCENT: Final = re.compile(r"(?<![0-9.])([0-9]{1,3})\s?%|百分之([0-9]{1,3})")
_HALF: Final = re.compile(r"\bhalf\b|一半|半价")
# "退 10" with no unit: a number right after a refund verb is an amount of money.
_ZH_REFUND_NUMBER: Final = re.compile(rf"退(?:款|钱|给我)?\s?{_MONEY}(?![0-9])")


def find_amount(folded: str) -> RequestedAmount | None:
    """The amount the customer names, if any: money ("$10", "退 10 块") or a share ("half")."""
    money = _AMOUNT_CENTS.search(folded) or _ZH_REFUND_NUMBER.search(folded)
    if money:
        value = next(g for g in money.groups() if g is not None)
        cents = int(Decimal(value) * 100)
        if cents >= 1:
            return RequestedAmount(cents=cents)
    share = _AMOUNT_PERCENT.search(folded)
    if share:
        percent = int(next(g for g in share.groups() if g is not None))
        if 1 <= percent <= 100:
            return RequestedAmount(percent=percent)
    if _HALF.search(folded):
        return RequestedAmount(percent=50)
    return None


def declines_refund(folded: str) -> bool:
    """The customer says they do not want a refund (or to drop the one they started)."""
    return bool(_NO_REFUND.search(folded))


def asks_question(folded: str) -> bool:
    return bool(_QUESTION.search(folded))


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
    amount = find_amount(folded)
    declined = declines_refund(folded)
    asks = asks_question(folded)
    language = (
        detect_language(clean) or ctx.language or (prev.language if prev else None) or Language.EN
    )

    if ctx.expecting is Expecting.EVIDENCE and evidence is None and clean and not orders:
        evidence = clean[:MAX_FIELD_CHARS]  # a description given when asked for evidence
    reason = reasons[0] if reasons else (prev.reason if prev else None)
    if (
        reason is None
        and ctx.expecting is Expecting.REASON
        and clean
        and not orders
        and not asks
        and not declined
    ):
        reason = RefundReason.OTHER  # they answered the question; we just cannot classify it

    intent = _intent(ctx, prev, folded, reasons, amount, declined=declined, asks=asks)
    order_id = orders[0] if len(orders) == 1 else None
    if not orders and prev is not None:
        order_id = prev.order_id
    evidence = evidence or (prev.evidence if prev else None)
    amount = amount or (prev.amount if prev else None)
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
        amount=amount,
    )


def _intent(
    ctx: IntakeContext,
    prev: Intake | None,
    folded: str,
    reasons: list[RefundReason],
    amount: RequestedAmount | None,
    *,
    declined: bool,
    asks: bool,
) -> Intent:
    """In this order: an approval (only when one is awaited), a refusal of a refund, a refund
    (its words, a reason, an amount, or the conversation so far), a question, anything else."""
    if ctx.expecting is Expecting.APPROVAL:  # a decision is awaited: it is one, or nothing
        return Intent.APPROVE if _is_approval(folded) else Intent.OTHER
    if declined:
        return Intent.NO_REFUND
    if _REFUND.search(folded) or reasons or amount is not None:
        return Intent.REFUND
    if prev is not None and prev.intent is Intent.REFUND:
        return Intent.REFUND  # an answer to its question (asked again if it is not one)
    if asks:
        return Intent.QUESTION
    return Intent.OTHER


def _is_approval(folded: str) -> bool:
    return (
        bool(_APPROVE.search(folded))
        and not _NOT_APPROVE.search(folded)
        and not looks_like_injection(folded)
    )


def _distinct(items: Iterable[_T]) -> list[_T]:
    return list(dict.fromkeys(items))
