"""The model interface: what the orchestrator asks a model, and what a provider implements.

Two levels, so that a real LLM and the offline rules fit the same shape:

    Model.understand(text, context) -> Intake        what the customer wants (structured)
    Model.explain(facts)            -> str           a short answer in the customer's language
          │  (for LLM providers: chat.ChatModel builds these on complete)
          ▼
    Model.complete(CompletionRequest) -> CompletionResponse
                                      messages in, text (and JSON for a schema'd output) out
                                      (the framework's level: accord.runtime.models.completion)

A provider implements ``complete``; it may also override ``understand``/``explain`` (the offline
model does, with rules). Every failure is an AccordError with a contract code.
"""

from __future__ import annotations

from abc import abstractmethod
from enum import StrEnum
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field

from accord.contracts.errors import ErrorCode
from accord.refund_contracts.domain import RefundReason
from accord.runtime.models.completion import CompletionModel

MAX_ORDER_DIGITS: Final = 12
WRITTEN_ORDER_ID_PATTERN: Final = rf"^O-[0-9]{{1,{MAX_ORDER_DIGITS}}}$"
"""An order number as a customer writes it, normalised (``O-12`` too). Not the contract's order
id format (``accord.refund_contracts.domain.ORDER_ID_PATTERN``): the workflow checks an intake
against that and asks again for an id the tools would refuse, so that what the customer said is kept
apart from what the tools accept."""
MAX_FIELD_CHARS: Final = 500


class Intent(StrEnum):
    """What the customer's message is. ``no_refund`` and ``question`` end the conversation
    with an answer (the workflow does not ask for refund details nobody asked to give);
    ``other`` (a greeting, a bare order number) is answered with an offer of help."""

    REFUND = "refund"
    APPROVE = "approve"  # only read while a workflow waits for an approval decision
    NO_REFUND = "no_refund"  # "I don't want a refund, just checking O-1004"
    QUESTION = "question"  # a question that is not a refund request ("What's the weather?")
    OTHER = "other"


ENDS_CONVERSATION: Final = frozenset({Intent.NO_REFUND, Intent.QUESTION})


class Language(StrEnum):
    ZH = "zh"
    EN = "en"


class Missing(StrEnum):
    """What intake still needs before the refund can be checked."""

    ORDER_ID = "order_id"
    REASON = "reason"


class Expecting(StrEnum):
    """What the workflow last asked the customer for (so a bare answer can be read)."""

    ORDER_ID = "order_id"
    REASON = "reason"
    EVIDENCE = "evidence"
    APPROVAL = "approval"


class RequestedAmount(BaseModel):
    """An amount the customer named: ``cents`` ("$10", "退 10 块") or ``percent`` of what is
    refundable ("refund half": 50). Recognised and carried, not yet decided on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cents: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    percent: Annotated[int, Field(ge=1, le=100)] | None = None


class Intake(BaseModel):
    """What the customer's message says, as the workflow needs it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    intent: Intent
    order_id: Annotated[str, Field(pattern=WRITTEN_ORDER_ID_PATTERN)] | None = None
    reason: RefundReason | None = None
    evidence: Annotated[str, Field(max_length=MAX_FIELD_CHARS)] | None = None
    language: Language
    missing: list[Missing] = Field(default_factory=list)
    question: Annotated[str, Field(max_length=MAX_FIELD_CHARS)] | None = None
    amount: RequestedAmount | None = None


class IntakeContext(BaseModel):
    """What the conversation already established; all optional."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    previous: Intake | None = None  # the last intake of this conversation, merged into the new
    expecting: Expecting | None = None  # what the last question asked for
    language: Language | None = None  # the conversation's language when the text has none


class Outcome(StrEnum):
    """What the workflow decided; the explanation says it to the customer."""

    REFUNDED = "refunded"
    PENDING_APPROVAL = "pending_approval"
    APPROVED = "approved"
    REJECTED = "rejected"  # an approver said no
    DENIED = "denied"  # the policy says no
    NEED_INFO = "need_info"
    FAILED = "failed"  # the work could not be done (see ``error``)
    NOT_FOUND = "not_found"  # no such order on the customer's account
    NO_REFUND = "no_refund"  # not a refund request: answered (an order's status) and ended
    NOT_UNDERSTOOD = "not_understood"  # asked the same question too often without an answer


FactValue = int | Annotated[str, Field(max_length=64)] | None


class DecisionFacts(BaseModel):
    """The facts an explanation may use; nothing else reaches the customer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    outcome: Outcome
    language: Language
    order_id: Annotated[str, Field(pattern=WRITTEN_ORDER_ID_PATTERN)] | None = None
    amount: Annotated[str, Field(pattern=r"^[0-9]{1,9}(\.[0-9]{1,2})?$")] | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = None
    refund_id: Annotated[str, Field(max_length=128)] | None = None
    rule: Annotated[str, Field(max_length=128)] | None = None  # policy rule id that decided
    detail: Annotated[str, Field(max_length=300)] | None = None  # deciding service's short note
    missing: list[Annotated[str, Field(max_length=64)]] = Field(default_factory=list, max_length=8)
    error: ErrorCode | None = None
    # Facts for the outcome's sentence (an order's status and dates, a question's topic).
    params: dict[Annotated[str, Field(max_length=32)], FactValue] = Field(
        default_factory=dict, max_length=12
    )


# -- the application's tasks at the completion level ---------------------------------------


class Task(StrEnum):
    """What a completion is for (``CompletionRequest.task``); the offline model dispatches on
    it, LLMs read the messages."""

    INTAKE = "intake"
    EXPLAIN = "explain"
    CHAT = "chat"


class Model(CompletionModel):
    """One model: the two business calls and the completion they can be built on.

    LLM providers subclass :class:`accord.agents.models.chat.ChatModel`, which implements
    ``understand`` and ``explain`` on top of ``complete``.
    """

    @abstractmethod
    async def understand(self, text: str, *, context: IntakeContext | None = None) -> Intake:
        """Read a customer message into an Intake (the text is data, never instructions)."""

    @abstractmethod
    async def explain(self, facts: DecisionFacts) -> str:
        """A short customer-facing explanation of ``facts`` in ``facts.language``."""
