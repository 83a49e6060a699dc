"""What the workflow carries: its input, the answers people give it, the final result."""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from accord.refund_contracts import compat

REFUND_KEY_PREFIX: Final = "refund:"
# intake asks the same question (the order number, the reason, its offer of help) at most this
# many times; with no usable answer by then the task ends with an explanation (not_understood).
MAX_ASKS: Final = 3


class WorkflowInput(BaseModel):
    """The workflow's input, fixed when the customer's first message starts it.

    ``customer_id`` and ``owner`` come from the verified principal (or the tenant a service
    acts for), never from the text. ``deadline`` is the customer's envelope deadline, which
    bounds the child tasks it delegates.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = ""
    order_id: str | None = None
    customer_id: str
    owner: str  # task-store owner scope of the customer's A2A task ("app/subject")
    app: str
    session: str
    units: int = Field(ge=0)
    # The envelope's tool calls; None for a workflow started before they were counted
    # (compat.WORKFLOW_UNCOUNTED_TOOL_CALLS) and for the in-process Runner, which has no
    # envelope of tool calls.
    tool_calls: int | None = Field(default=None, ge=0)
    deadline: str  # ISO 8601
    traceparent: str | None = None
    message_id: str | None = None  # the A2A message that started it (its task's history)
    data: dict[str, Any] | None = None  # that message's DataPart, as sent
    # The envelope's constraint max_refund_cents (contract 1.3, ENV-007): no refund above it
    # is paid. None: no limit given (and every workflow started before 1.3).
    max_refund_cents: int | None = Field(default=None, ge=0)
    # The envelope's context refs (the customer's evidence references), passed to policy-check
    # as its contract says (ENV-008).
    context_refs: list[str] = Field(default_factory=list)

    @compat.kept_for(compat.WORKFLOW_INPUT_AS_RELEASED)
    def stored(self) -> dict[str, Any]:
        """The input as the workflow log keeps it. Fields newer than the last release are left
        out while unused: in a rolling upgrade that release's replicas read this log, and their
        model refuses a field it does not know (tests/storage/test_rolling_upgrade.py)."""
        kept = self.model_dump(mode="json")
        for newer in _NEWER_THAN_RELEASE:
            if kept.get(newer) == WorkflowInput.model_fields[newer].get_default(
                call_default_factory=True
            ):
                del kept[newer]
        return kept


# Fields added after v0.2.0 (contracts/releases/): their defaults are what that release assumed
# (compat.WORKFLOW_INPUT_AS_RELEASED).
_NEWER_THAN_RELEASE: tuple[str, ...] = ("max_refund_cents", "context_refs")


class RefusedInput(BaseModel):
    """The record of a request refused before any work began (bad input, no permission):
    enough to show and list its task. ``owner`` and ``session`` as in WorkflowInput."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    refused: bool = True
    owner: str
    session: str
    message_id: str | None = None
    text: str = ""
    data: dict[str, Any] | None = None


@compat.kept_for(compat.REFUND_GRAPH_V1_V2)
def order_refund_key(order_id: str) -> str:
    """The key graphs 1 and 2 gave a refund: the order alone (one refund per order). Current
    workflows key each request (refund/money.py ``refund_key``); this one stays for workflows in
    flight on those versions."""
    return f"{REFUND_KEY_PREFIX}{order_id}"


def answer_value(
    text: str, data: dict[str, Any] | None, asked: Any, *, message_id: str | None = None
) -> dict[str, Any]:
    """What a customer's answer to an INPUT interrupt is recorded as. ``asked`` echoes the
    interrupt's payload back to the node (child task ids live there: node state is not
    durable, the log is); ``message_id`` names the A2A message that carried it."""
    value: dict[str, Any] = {"text": text, "data": data, "asked": asked}
    if message_id:
        value["message_id"] = message_id
    return value


def answer_text(value: Any) -> str:
    """The text of a recorded answer (a DataPart's ``text``/``evidence``/``order_id`` too)."""
    if not isinstance(value, dict):
        return str(value or "")
    text = value.get("text")
    if isinstance(text, str) and text.strip():
        return text
    data = value.get("data")
    if isinstance(data, dict):
        for key in ("text", "evidence", "order_id"):
            item = data.get(key)
            if isinstance(item, str) and item.strip():
                return item
    return ""


def asked_payload(value: Any) -> dict[str, Any]:
    """The interrupt payload an answer echoes (see :func:`answer_value`)."""
    if isinstance(value, dict) and isinstance(value.get("asked"), dict):
        return dict(value["asked"])
    return {}
