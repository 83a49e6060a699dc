"""The refund conversation, approval included, from JavaScript (@a2a-js/sdk 1.3.0), validated
against the schemas of `accord contracts export`.

Runs tests/interop/js/refund_conversation.mjs against the orchestrator of a running mesh. The
script validates every status, error and answer it receives with ajv against the exported
JSON Schemas and reports violations; this test asserts the conversation and that there were
none. Skipped locally when the npm packages are not installed; on CI (CI set) it must run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.mesh import matrix
from tests.mesh.mesh_support import JS, Mesh, declared, mesh_for_module, node_env, npm_version
from tests.mesh.support import token

from accord.contracts.errors import ErrorCode
from accord.contracts.status import A2AState, Status, WaitingReason

__all__ = ["mesh_for_module"]

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]


def export_contracts(directory: Path) -> Path:
    """The language-neutral export, written by the CLI exactly as a JS team would run it."""
    done = subprocess.run(
        [sys.executable, "-m", "accord.agents.cli.main", "contracts", "export", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (directory / "agents" / "orchestrator.json").is_file()
    return directory


def run_conversation(mesh: Mesh, schemas: Path) -> dict[str, Any]:
    env = node_env()
    done = subprocess.run(
        [
            "node",
            "refund_conversation.mjs",
            mesh.orchestrator,
            token("C-03"),
            token("approver-js", "approver"),
            str(schemas),
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


def test_js_client_holds_the_refund_conversation(mesh_for_module: Mesh, tmp_path: Path) -> None:
    node_env()  # skip (locally) before anything is recorded when npm packages are missing
    said = declared(mesh_for_module, "orchestrator")
    with matrix.cell(
        "orchestrator",
        "javascript",
        client_version=npm_version("@a2a-js/sdk"),
        contract=said.contract,
        service_contract=said.service_contract,
        note="approval conversation and O-1005 continuation; all answers ajv-valid against "
        "`accord contracts export`",
    ):
        out = run_conversation(mesh_for_module, export_contracts(tmp_path / "export"))
        assert (out["binding"], out["version"]) == ("JSONRPC", "1.0")
        assert out["violations"] == [], json.dumps(out["violations"], indent=1)[:3000]
        assert out["validated"] >= 15  # statuses, errors and answers were really checked

        ask = out["ask"]
        assert ask["states"][-1] == A2AState.INPUT_REQUIRED.value
        assert ask["meta"]["status"] == Status.WAITING.value
        assert ask["meta"]["waitingReason"] == WaitingReason.APPROVAL.value

        own = out["own"]
        assert own["state"] == A2AState.FAILED.value
        assert own["meta"]["error"]["code"] == ErrorCode.PERMISSION_DENIED.value

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
