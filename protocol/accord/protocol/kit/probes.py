"""Probes: the inputs the kit sends to provoke a behaviour it must observe.

The kit cannot guess what input makes a given agent wait for an answer, or which order can be
refunded on a given tool server; a probe file says it (``--probe FILE``, JSON)::

    {
      "agents": {                        # by skill id
        "refund.policy": {
          "message": {...},              # first message DataPart (must succeed or wait)
          "answer": {...},               # answer DataPart when the first message waits (input)
          "decline": {...},              # a first message the skill declines (ends REJECTED)
          "metadata": {...}              # extra message metadata (optional)
        }
      },
      "tools": {                         # by tool name
        "refunds.issue": {
          "valid": {...},                # arguments of a call that succeeds
          "invalid": {...},              # arguments that are INVALID_INPUT
          "not_found": {...},            # arguments naming a resource the caller cannot see
          "conflict": {...}              # write tools: the valid key with other arguments
        }
      }
    }

String values may contain ``{run}``: it becomes a token unique to one kit run, so idempotency
keys of one run never collide with an earlier run's. Built-in probes cover Accord's shipped
agents and tools against the demo data; a probe file overrides them per skill or tool.

The built-in probes are repeatable on a used mesh: nothing they send depends on what was
refunded before. The one write (``refunds.issue``, one cent) goes to the kit's own order
(O-9001 of customer C-90, seeded for it: 100,000.00 to refund a cent at a time) under a key of
this run; the orchestrator's probe asks for a refund without an order number (it waits for
input) and answers with O-1002, an order outside the return window (nothing is paid).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from accord.contracts.errors import AccordError, ErrorCode

RUN_PLACEHOLDER: Final = "{run}"


class AgentProbe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    message: dict[str, Any]
    answer: dict[str, Any] | None = None
    # A request the skill declines (contract 1.2, STATUS-008): the kit expects REJECTED.
    decline: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The customer a service credential's envelope acts for: an agent answers a service only
    # about the customer its envelope names (docs/security-a2a.md). End-user tokens ignore it.
    acts_for: str | None = None


class ToolProbe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    valid: dict[str, Any] | None = None
    invalid: dict[str, Any] | None = None
    not_found: dict[str, Any] | None = None
    conflict: dict[str, Any] | None = None


class Probes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: dict[str, AgentProbe] = Field(default_factory=dict)
    tools: dict[str, ToolProbe] = Field(default_factory=dict)

    def merged(self, other: Probes) -> Probes:
        """``other`` wins per skill and per tool."""
        return Probes(agents={**self.agents, **other.agents}, tools={**self.tools, **other.tools})


# The demo data the shipped services seed (accord.tools.seed): O-1001 belongs to C-01, is
# delivered and refundable; O-1003 belongs to C-02; O-1005 is a mug a damage claim is about.
_DAMAGED_MUG: Final = {
    "order": {
        "order_id": "O-1005",
        "total_cents": 3500,
        "refunded_cents": 0,
        "refundable_cents": 3500,
        "final_sale": False,
        "days_since_delivery": 2,
        "status": "delivered",
    },
    "reason": "damaged",
}
_REFUND_KEY: Final = "contract-test:" + RUN_PLACEHOLDER

# The kit's own order and customer (accord.tools.seed): never refunded by anyone else.
_PROBE_ORDER: Final = {"order_id": "O-9001", "customer_id": "C-90"}

BUILTIN: Final = Probes(
    agents={
        "refund.request": AgentProbe(
            message={"text": "I want a refund, the running shoes do not fit"},
            answer={"text": "O-1002"},
            acts_for="C-01",
        ),
        "refund.policy": AgentProbe(
            message=_DAMAGED_MUG,
            answer={"evidence": "photo ref IMG-2041: the handle is broken off"},
        ),
        "refund.risk": AgentProbe(
            message={"order_id": "O-1001", "customer_id": "C-01", "amount_cents": 1000},
            acts_for="C-01",
        ),
    },
    tools={
        "orders.lookup": ToolProbe(
            valid={"order_id": "O-1001", "customer_id": "C-01"},
            invalid={"order_id": "not-an-order", "customer_id": "C-01"},
            not_found={"order_id": "O-1003", "customer_id": "C-01"},
        ),
        "customers.history": ToolProbe(
            valid={"customer_id": "C-01"},
            invalid={"customer_id": 7},
            not_found={"customer_id": "C-9999"},
        ),
        "orders.customer_history": ToolProbe(
            valid={"order_id": "O-1001", "customer_id": "C-01"},
            invalid={"order_id": "not-an-order", "customer_id": "C-01"},
            not_found={"order_id": "O-1003", "customer_id": "C-01"},
        ),
        "refunds.get": ToolProbe(
            valid={"idempotency_key": _REFUND_KEY, "customer_id": "C-01"},
            invalid={"idempotency_key": "", "customer_id": "C-01"},
        ),
        "refunds.list": ToolProbe(
            valid={"customer_id": "C-01"},
            invalid={"customer_id": "C-01", "since_days": 0},
        ),
        "refunds.issue": ToolProbe(
            valid={
                "idempotency_key": _REFUND_KEY,
                **_PROBE_ORDER,
                "amount_cents": 1,
                "reason": "accord contract test",
            },
            invalid={
                "idempotency_key": _REFUND_KEY + "-bad",
                **_PROBE_ORDER,
                "amount_cents": -5,
                "reason": "accord contract test",
            },
            not_found={
                "idempotency_key": _REFUND_KEY + "-nf",
                "order_id": "O-1003",
                "customer_id": "C-01",
                "amount_cents": 1,
                "reason": "accord contract test",
            },
            conflict={
                "idempotency_key": _REFUND_KEY,
                **_PROBE_ORDER,
                "amount_cents": 2,
                "reason": "accord contract test",
            },
        ),
    },
)


def load_probes(path: Path | str | None) -> Probes:
    """The built-in probes, overridden by the file at ``path`` (if any)."""
    if path is None:
        return BUILTIN
    p = Path(path)
    try:
        raw = json.loads(p.read_text())
        return BUILTIN.merged(Probes.model_validate(raw))
    except OSError:
        raise AccordError(
            ErrorCode.INVALID_INPUT, f"probe file {p} cannot be read", {"field": "--probe"}
        ) from None
    except ValueError as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else "not JSON"
        raise AccordError(
            ErrorCode.INVALID_INPUT, f"probe file {p}: {first}", {"field": "--probe"}
        ) from None


def new_run_token() -> str:
    return uuid.uuid4().hex[:12]


def fill(value: Any, run: str) -> Any:
    """``value`` with every ``{run}`` in its strings replaced by the run token."""
    if isinstance(value, str):
        return value.replace(RUN_PLACEHOLDER, run)
    if isinstance(value, dict):
        return {k: fill(v, run) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, run) for v in value]
    return value
