"""The refund application's probes for the contract test kit: the inputs that make its agents
and tool servers show each behaviour the kit must observe, against the demo data
(accord.tools.seed). Registered under the entry point group ``accord.kit.probes``
(agents/pyproject.toml), so an installed kit finds them; the kit itself ships none.

They are repeatable on a used mesh: nothing they send depends on what was refunded before. The
one write (``refunds.issue``, one cent) goes to the kit's own order (O-9001 of customer C-90,
seeded for it: 100,000.00 to refund a cent at a time) under a key of the run; the
orchestrator's probe asks for a refund without an order number (it waits for input) and answers
with O-1002, an order outside the return window (nothing is paid).
"""

from __future__ import annotations

from typing import Final

from accord.kit.probes import RUN_PLACEHOLDER, AgentProbe, Probes, ToolProbe

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
_REFUND_KEY: Final = "contract-test:" + RUN_PLACEHOLDER  # one key per kit run

# The kit's own order and customer (accord.tools.seed): never refunded by anyone else.
_PROBE_ORDER: Final = {"order_id": "O-9001", "customer_id": "C-90"}

PROBES: Final = Probes(
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
