"""Refunds a person must look at: the approver's side of a receipt that does not match.

When the payments ledger already holds a receipt under a refund's key that is not the refund
the workflow decided (another amount, order or customer: someone issued it first, see
``nodes_outcome.refund``), the workflow stops with IDEMPOTENCY_CONFLICT and the customer is
told only that a person will look at it. The approvers of the customer's app are told here:

- a WARNING log line naming the task, the order, the key and what differed;
- an item in their approval queue (``GET /approvals``, ``accord tasks`` as an approver) with
  ``kind: "attention"``, the expected refund and the receipt found.

The item is one more record in the workflow log (the one truth of the orchestrator), written
like a refused request: a workflow that failed at once, with the id ``attention-<task id>``
(so a crash-and-rerun of the node records it once) under the owner scope
``<app>/#attention``. No principal owns that scope: ``#`` is not a character of a subject, so
no task listing shows it; the queue reads it by scope. An item stays listed until the log is
pruned: resolving the ledger entry is a person's work (docs/security-a2a.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from accord.agents.refund.config import GRAPH_NAME
from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.auth import owner_key
from accord.runtime.workflow import Runtime

logger = logging.getLogger(__name__)

ATTENTION_SUBJECT: Final = "#attention"
ATTENTION_PREFIX: Final = "attention-"
ATTENTION_KIND: Final = "attention"
ATTENTION_KEY: Final = "attention"  # in the record's input: the item
ATTENTION_LIMIT: Final = 500


class Attention(BaseModel):
    """What an approver needs to sort out a refund that stopped on a foreign receipt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str  # the customer's refund task
    app: str
    customer_id: str
    order_id: str
    idempotency_key: str
    code: str = ErrorCode.IDEMPOTENCY_CONFLICT.value
    expected_amount_cents: int
    expected_currency: str | None
    found: dict[str, Any] | None  # the receipt the ledger holds (None: refunds.issue refused)
    mismatched: list[str]  # the receipt fields that differ from the request


Flag = Callable[[Attention], Awaitable[None]]


def attention_scope(app: str) -> str:
    return owner_key(app, ATTENTION_SUBJECT)


def log_attention(item: Attention) -> None:
    found = item.found or {}
    logger.warning(
        "refund task %s needs a person: the ledger holds a receipt under %s that does not match "
        "the refund decided (order %s, customer %s, %s %s; differs in: %s; receipt %s)",
        item.task_id,
        item.idempotency_key,
        item.order_id,
        item.customer_id,
        item.expected_amount_cents,
        item.expected_currency or "",
        ", ".join(item.mismatched) or "refused by payments",
        found.get("receipt_id", "none"),
    )


def attention_board(runtime: Runtime) -> Flag:
    """The orchestrator's flag: record the item in the log, under the app's attention scope."""

    async def flag(item: Attention) -> None:
        scope = attention_scope(item.app)
        record = {"owner": scope, "session": "", ATTENTION_KEY: item.model_dump(mode="json")}
        error = AccordError(
            ErrorCode.IDEMPOTENCY_CONFLICT,
            "a refund stopped on a receipt that does not match it",
            {"task_id": item.task_id},
        )
        await runtime.record_refused(
            GRAPH_NAME, ATTENTION_PREFIX + item.task_id, record, error, scope=scope
        )

    return flag


async def attention_items(runtime: Runtime, app: str) -> list[dict[str, Any]]:
    """The app's items, newest first, as the approval queue lists them."""
    records, _ = await runtime.log.list_workflows(attention_scope(app), limit=ATTENTION_LIMIT)
    items: list[dict[str, Any]] = []
    for record in records:
        events = await runtime.log.read(record.workflow_id)
        inp = events[0].data.get("input") if events else None
        body = inp.get(ATTENTION_KEY) if isinstance(inp, dict) else None
        if not isinstance(body, dict):
            continue
        item = Attention.model_validate(body)
        items.append(
            {
                "kind": ATTENTION_KIND,
                "task_id": item.task_id,
                "code": item.code,
                "at": record.updated_at,
                "facts": {
                    "order_id": item.order_id,
                    "customer_id": item.customer_id,
                    "amount_cents": item.expected_amount_cents,
                    "currency": item.expected_currency,
                    "idempotency_key": item.idempotency_key,
                    "mismatched": item.mismatched,
                    "found": item.found,
                },
            }
        )
    return items
