"""The refund conversation, approval included, from JavaScript (@a2a-js/sdk 1.3.0), validated
against the schemas the orchestrator's Agent Card names.

Runs tests/interop/js/refund_conversation.mjs against the orchestrator of a running mesh. The
script finds the skill schemas from the card alone (card_schemas.mjs: the contract extension's
``skillSchemas``), validates every status, error and answer it receives, and every DataPart it
sends, with ajv, and reports violations; this test asserts the conversation, that there were
none, and that the schemas it used are the orchestrator contract's. Skipped locally when the
npm packages are not installed; on CI (CI set) it must run.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from tests.mesh import matrix
from tests.mesh.mesh_support import JS, Mesh, declared, mesh_for_module, node_env, npm_version
from tests.mesh.support import token

from accord.contracts.agents import shipped_agent_contracts
from accord.contracts.keys import SKILL_SCHEMAS_PATH
from accord.contracts.status import A2AState, Status, WaitingReason

__all__ = ["mesh_for_module"]

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]


def run_conversation(mesh: Mesh) -> dict[str, Any]:
    env = node_env()
    done = subprocess.run(
        [
            "node",
            "refund_conversation.mjs",
            mesh.orchestrator,
            token("C-03"),
            token("approver-js", "approver"),
            "JSONRPC",
            token("C-01"),
        ],
        cwd=JS,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_js_client_holds_the_refund_conversation(mesh_for_module: Mesh) -> None:
    node_env()  # skip (locally) before anything is recorded when npm packages are missing
    said = declared(mesh_for_module, "orchestrator")
    with matrix.cell(
        "orchestrator",
        "javascript",
        client_version=npm_version("@a2a-js/sdk"),
        contract=said.contract,
        service_contract=said.service_contract,
        note="approval conversation and O-1005 continuation; all answers ajv-valid against "
        "the schemas its card names",
    ):
        out = run_conversation(mesh_for_module)
        assert (out["binding"], out["version"]) == ("JSONRPC", "1.0")
        seen = out["schemas"]  # found from the card, the contract's, and cacheable
        assert seen["url"] == mesh_for_module.orchestrator.rstrip("/") + SKILL_SCHEMAS_PATH
        assert seen["etag"] == f'"{seen["sha256"]}"'
        assert seen["revalidated"] == 304
        contract = shipped_agent_contracts()["orchestrator"]
        assert sorted(seen["skills"]) == sorted(s.id for s in contract.skills)
        assert out["violations"] == [], json.dumps(out["violations"], indent=1)[:3000]
        assert out["validated"] >= 15  # statuses, errors and answers were really checked

        ask = out["ask"]
        assert ask["states"][-1] == A2AState.INPUT_REQUIRED.value
        assert ask["meta"]["status"] == Status.WAITING.value
        assert ask["meta"]["waitingReason"] == WaitingReason.APPROVAL.value

        own = out["own"]  # refused before any task: a JSON-RPC error, not a failed task
        assert own["refused"] is not None
        assert "refund.approve may not be asked for" in own["refused"], own

        approve = out["approve"]
        assert approve["state"] == A2AState.COMPLETED.value
        assert approve["answer"]["task_id"] == ask["id"]
        assert approve["answer"]["outcome"]["result"]["decision"] == "refunded"

        final = out["final"]
        assert final["id"] == ask["id"]
        assert final["state"] == A2AState.COMPLETED.value
        result = final["answer"]
        assert result["decision"] == "refunded"
        assert result["approved_by"] == "approver-js"
        assert result["receipt"]["idempotency_key"].startswith("refund:O-1004:")
        assert result["receipt"]["amount_cents"] == 129900

        evidence = out["evidence"]
        assert evidence["asked"]["meta"]["waitingReason"] == WaitingReason.INPUT.value
        assert "photo" in evidence["asked"]["question"]
        answered = evidence["answered"]
        assert answered["sameTask"] is True
        assert answered["state"] == A2AState.COMPLETED.value
        assert answered["answer"]["rule"] == "damage_with_evidence"
