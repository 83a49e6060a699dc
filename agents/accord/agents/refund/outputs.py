"""The refund graph's node outputs, as typed models.

A node returns one of these (or `Route(label, model)`); the runtime logs it as JSON with
`model_dump(mode="json")`, and the next nodes read it back through `Upstream`. The JSON is the
shape the 0.1 nodes wrote as dicts, key for key, so logs written then replay with this code.
`RefundResult` is what the end nodes return: the orchestrator skill's output (refund.request),
which the executor and the Runner read from the log as JSON.

Models of what a peer returns (orders.lookup's facts, whose one type is
`accord.refund_contracts.orders.OrderFacts`; policy-check's and risk-check's answers, a payments
receipt) mirror the peer's contract and forbid extra fields: a peer answering
outside its contract fails the node with CONTRACT_VIOLATION (see `from_peer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from accord.agents.models import Language, RequestedAmount
from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.validation import first_broken
from accord.refund_contracts.domain import ApprovalDecision, RefundDecision, RefundReason
from accord.refund_contracts.orders import OrderFacts

M = TypeVar("M", bound=BaseModel)


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- intake ---------------------------------------------------------------------------------
class Understood(_Output):
    """intake (label "refund"): the refund request, complete (intake asks until it is)."""

    order_id: str
    reason: RefundReason | None
    evidence: str | None
    language: Language
    customer_id: str
    amount: RequestedAmount | None = None  # what the customer named, carried as said


class Inquiry(_Output):
    """intake (label "answer", graph 2): not a refund request, or no usable answer to the
    same question asked three times; ``answer`` replies and ends the task."""

    kind: Literal["no_refund", "question", "not_understood"]
    order_id: str | None
    language: Language
    customer_id: str
    expecting: str | None = None  # not_understood: what was asked (None: the offer of help)
    asked: int = 0


# -- the three checks -----------------------------------------------------------------------
class NotFound(_Output):
    """A check found no such order of this customer's (decide explains it)."""

    found: Literal[False] = False


class OrderFound(OrderFacts):
    """order: the facts of the customer's order."""

    found: Literal[True] = True


class OrderNotFound(NotFound):
    """order: no such order of theirs."""

    order_id: str


class PolicyVerdict(_Output):
    """policy: policy-check's answer (skill refund.policy) and the child task that gave it."""

    found: Literal[True] = True
    eligible: bool
    rule: str
    max_refund_cents: int
    # English, deprecated in policy-check 1.1; never shown (compat.POLICY_ENGLISH_EXPLANATION)
    explanation: str | None = None
    params: dict[str, int | str | None] = Field(default_factory=dict)  # 1.1; {} from 1.0
    child_task_id: str


class RiskVerdict(_Output):
    """risk: risk-check's answer (skill refund.risk) and the child task that gave it."""

    found: Literal[True] = True
    risk: str
    score: float
    signals: list[str]
    child_task_id: str


OrderOutput = Annotated[OrderFound | OrderNotFound, Field(discriminator="found")]
PolicyOutput = Annotated[PolicyVerdict | NotFound, Field(discriminator="found")]
RiskOutput = Annotated[RiskVerdict | NotFound, Field(discriminator="found")]


# -- decide, approval -----------------------------------------------------------------------
class Summary(_Output):
    """decide: what the checks found, as the ends and the approver need it."""

    order_id: str
    currency: str | None
    rule: str | None
    amount_cents: int
    policy: str | None  # policy-check's explanation (English; for the approver, not the customer)
    risk: str | None
    score: float | None
    signals: list[str]
    params: dict[str, int | str | None] = Field(default_factory=dict)  # the rule's parameters


class ApproverAnswer(_Output):
    """approval: what the approver decided, with their note."""

    decision: ApprovalDecision
    note: str
    approver: str | None


# -- the ends -------------------------------------------------------------------------------
class Receipt(_Output):
    """A payments receipt (tool contracts refunds.issue and refunds.get)."""

    receipt_id: str
    idempotency_key: str
    order_id: str
    customer_id: str
    amount_cents: int
    currency: str
    reason: str
    approved_by: str | None
    created_at: str


def receipt_mismatches(
    receipt: Receipt,
    *,
    idempotency_key: str,
    order_id: str,
    customer_id: str,
    amount_cents: int,
    currency: str | None,
) -> list[str]:
    """The fields in which a receipt the ledger holds differs from the refund decided (empty:
    it is this refund). ``reason`` and ``approved_by`` are not compared: they do not change what
    the customer was paid, which is what the customer is told."""
    expected: dict[str, object] = {
        "idempotency_key": idempotency_key,
        "order_id": order_id,
        "customer_id": customer_id,
        "amount_cents": amount_cents,
    }
    if currency is not None:
        expected["currency"] = currency
    return [name for name, value in expected.items() if getattr(receipt, name) != value]


class RefundResult(_Output):
    """refund, explain, rejected: the orchestrator skill's output (refund.request)."""

    decision: RefundDecision
    order_id: str | None
    rule: str | None
    amount_cents: int
    reasons: list[str]
    receipt: Receipt | None
    approved_by: str | None
    explanation: str


# -- reading ----------------------------------------------------------------------------------
_ORDER: TypeAdapter[OrderFound | OrderNotFound] = TypeAdapter(OrderOutput)
_POLICY: TypeAdapter[PolicyVerdict | NotFound] = TypeAdapter(PolicyOutput)
_RISK: TypeAdapter[RiskVerdict | NotFound] = TypeAdapter(RiskOutput)


class Upstream:
    """The outputs of the nodes that finished before this one, typed."""

    def __init__(self, outputs: Mapping[str, Any]) -> None:
        self._outputs = outputs

    def intake(self) -> Understood:
        return Understood.model_validate(self._outputs["intake"])

    def inquiry(self) -> Inquiry:
        return Inquiry.model_validate(self._outputs["intake"])

    def order(self) -> OrderFound | OrderNotFound:
        return _ORDER.validate_python(self._outputs["order"])

    def policy(self) -> PolicyVerdict | NotFound:
        return _POLICY.validate_python(self._outputs["policy"])

    def risk(self) -> RiskVerdict | NotFound:
        return _RISK.validate_python(self._outputs["risk"])

    def decide(self) -> Summary:
        return Summary.model_validate(self._outputs["decide"])

    def approval(self) -> ApproverAnswer | None:
        """None unless the workflow went through approval."""
        value = self._outputs.get("approval")
        return None if value is None else ApproverAnswer.model_validate(value)


def from_peer(model: type[M], data: Any, peer: str) -> M:
    """A peer's answer as ``model``; CONTRACT_VIOLATION (naming the field, not echoing the
    value) if it is not what the peer's contract says."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        broken = first_broken(exc)
        raise AccordError(
            ErrorCode.CONTRACT_VIOLATION,
            f"{peer} answered outside its contract",
            {"peer": peer, "field": broken.field, "rule": broken.rule},
        ) from None
