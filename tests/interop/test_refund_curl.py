"""The refund conversation, approval included, with nothing but curl: docs/curl-refund-approval.sh
run as shipped against the orchestrator of a running mesh; then docs/curl-refund-answer.sh, a
damage claim whose question is answered in the same task."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.mesh import matrix
from tests.mesh.mesh_support import ROOT, Mesh, declared, mesh_for_module, token

from accord.contracts.keys import RECEIPT_ARTIFACT_NAME, RESULT_ARTIFACT_NAME, STATUS_META_KEY
from accord.contracts.status import A2AState, Status, WaitingReason

__all__ = ["mesh_for_module"]

SCRIPT = ROOT / "docs" / "curl-refund-approval.sh"
ANSWER_SCRIPT = ROOT / "docs" / "curl-refund-answer.sh"

pytestmark = pytest.mark.timeout(240)


def _need_curl() -> None:
    if shutil.which("curl") is None:
        if os.environ.get("CI"):
            pytest.fail("curl must be installed on CI")
        pytest.skip("curl is not installed")


def _status(task: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = task["metadata"][STATUS_META_KEY]  # the task's current status
    return meta


def _artifact(task: dict[str, Any], name: str) -> dict[str, Any]:
    """An artifact by name, as a curl user finds it (``jq '.artifacts[] | select(.name==...)'``):
    a task may carry several (the orchestrator's result, then its receipt)."""
    found: dict[str, Any] = next(a for a in task["artifacts"] if a["name"] == name)
    return found


def _answer(task: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = _artifact(task, RESULT_ARTIFACT_NAME)["parts"][0]["data"]
    return data


def test_the_shipped_curl_script_holds_the_conversation(mesh_for_module: Mesh) -> None:
    _need_curl()
    said = declared(mesh_for_module, "orchestrator")
    with matrix.cell(
        "orchestrator",
        "curl",
        client_version="curl (any version)",  # the doc must not depend on the machine's curl
        contract=said.contract,
        service_contract=said.service_contract,
        note="docs/curl-refund-approval.sh as shipped: ask, approve, read the receipt",
    ):
        env = {
            **os.environ,
            "ACCORD_URL": mesh_for_module.orchestrator,
            "ACCORD_TOKEN": token("C-03"),
            "ACCORD_APPROVER_TOKEN": token("approver-curl", "approver"),
        }
        run = subprocess.run(
            ["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert run.returncode == 0, run.stderr + run.stdout[-2000:]
        asked, decided, final = (json.loads(line) for line in run.stdout.strip().splitlines())

        task = asked["result"]["task"]
        assert task["status"]["state"] == A2AState.INPUT_REQUIRED.value
        assert _status(task)["status"] == Status.WAITING.value
        assert _status(task)["waitingReason"] == WaitingReason.APPROVAL.value

        approval = decided["result"]["task"]
        assert approval["status"]["state"] == A2AState.COMPLETED.value
        assert _answer(approval)["task_id"] == task["id"]

        ended = final["result"]  # GetTask answers with the Task itself
        assert ended["id"] == task["id"]
        assert ended["status"]["state"] == A2AState.COMPLETED.value
        result = _answer(ended)
        assert result["decision"] == "refunded"
        assert result["approved_by"] == "approver-curl"
        assert result["receipt"]["idempotency_key"].startswith("refund:O-1004:")
        assert result["receipt"]["amount_cents"] == 129900  # a double on the wire: 129900.0
        # The receipt a person reads, next to the data (docs/refund-assistant.md).
        receipt = _artifact(ended, RECEIPT_ARTIFACT_NAME)["parts"]
        assert receipt[0]["mediaType"] == "text/plain"
        assert receipt[0]["text"].startswith(f"Refund receipt {result['receipt']['receipt_id']}")
        assert "Amount refunded: $1,299.00" in receipt[0]["text"]
        assert "Approved by: approver-curl" in receipt[0]["text"]

        # A question answered in the same task (O-1005 is C-01's damaged mug).
        env = {**env, "ACCORD_TOKEN": token("C-01")}
        run = subprocess.run(
            ["sh", str(ANSWER_SCRIPT)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 0, run.stderr + run.stdout[-2000:]
        claimed, answered = (json.loads(line) for line in run.stdout.strip().splitlines())
        claim = claimed["result"]["task"]
        assert claim["status"]["state"] == A2AState.INPUT_REQUIRED.value
        assert _status(claim)["waitingReason"] == WaitingReason.INPUT.value
        assert "photo" in claim["status"]["message"]["parts"][0]["text"]
        same = answered["result"]["task"]
        assert same["id"] == claim["id"]
        assert same["status"]["state"] == A2AState.COMPLETED.value
        assert _answer(same)["decision"] == "refunded"
        assert _answer(same)["rule"] == "damage_with_evidence"


@pytest.mark.parametrize("script", [SCRIPT, ANSWER_SCRIPT], ids=lambda p: p.name)
def test_the_script_is_plain_posix_sh(script: Path) -> None:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    check = subprocess.run(["dash", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert Path(script).read_text().startswith("#!/bin/sh\n")
