"""What a refund client in another language must have seen (tests/interop/go, tests/interop/java).

Each client runs the same conversation against the orchestrator and prints one JSON object of
what it saw; :func:`assert_conversation` judges it the same way for every language:

- the customer's large refund (O-1004) waits for an approver;
- the customer's own approval is refused, before any task exists, with PERMISSION_DENIED;
- the approver's refund.approve completes and the customer's task ends refunded, approved by
  that approver, with the receipt of this request;
- a damage claim (O-1005) asks for a photo, and the answer continues the same task to a refund.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

from accord.contracts.errors import ErrorCode
from accord.contracts.status import A2AState, Status, WaitingReason
from tests.mesh.support import Mesh, token

CUSTOMER = "C-03"  # owns O-1004 in the seed data
MUG_CUSTOMER = "C-01"  # owns O-1005


def run_client(command: Sequence[str], mesh: Mesh, approver: str, timeout: float) -> dict[str, Any]:
    """Run one client process against the mesh's orchestrator; its last line of output."""
    done = subprocess.run(
        [
            *command,
            mesh.orchestrator,
            token(CUSTOMER),
            token(approver, "approver"),
            token(MUG_CUSTOMER),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    # The head too: a Java stack trace names its cause first.
    assert done.returncode == 0, done.stderr[:2000] + "\n...\n" + done.stderr[-1500:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def assert_conversation(out: dict[str, Any], approver: str) -> None:
    ask = out["ask"]
    assert ask["state"] == A2AState.INPUT_REQUIRED.value
    assert ask["meta"]["status"] == Status.WAITING.value
    assert ask["meta"]["waitingReason"] == WaitingReason.APPROVAL.value
    assert "approver" in ask["question"]

    own = out["own"]  # refused before any task: the typed contract error, read from the wire
    assert own["code"] == ErrorCode.PERMISSION_DENIED.value, own
    assert "refund.approve may not be asked for" in own["message"], own

    approve = out["approve"]
    assert approve["state"] == A2AState.COMPLETED.value
    assert approve["answer"]["task_id"] == ask["id"]
    assert approve["answer"]["outcome"]["result"]["decision"] == "refunded"

    final = out["final"]
    assert final["id"] == ask["id"]
    assert final["state"] == A2AState.COMPLETED.value
    result = final["answer"]
    assert result["decision"] == "refunded"
    assert result["approved_by"] == approver
    assert result["receipt"]["idempotency_key"] == f"refund:O-1004:{ask['id']}"
    assert result["receipt"]["amount_cents"] == 129900

    evidence = out["evidence"]
    asked = evidence["asked"]
    assert asked["state"] == A2AState.INPUT_REQUIRED.value
    assert asked["meta"]["waitingReason"] == WaitingReason.INPUT.value
    assert "photo" in asked["question"]
    answered = evidence["answered"]
    assert evidence["sameTask"] is True
    assert answered["id"] == asked["id"]
    assert answered["state"] == A2AState.COMPLETED.value
    assert answered["answer"]["decision"] == "refunded"
    assert answered["answer"]["rule"] == "damage_with_evidence"
