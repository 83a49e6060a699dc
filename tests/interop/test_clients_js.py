"""docs/clients-js.md: its example, docs/examples/refund_client.mjs, run as shipped against the
orchestrator of a running mesh, with tokens from `accord token` as the page says.

The page shows the file verbatim (checked here), so the documentation cannot drift from what
works. The file is copied next to a link to tests/interop/js/node_modules, the way a user's
project holds it beside its own `npm install @a2a-js/sdk@1.3.0`. Skipped locally when the npm
packages are not installed; on CI (CI set) it must run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.mesh.mesh_support import JS, ROOT, Mesh, mesh_for_module, node_env

from accord.contracts.errors import ErrorCode
from accord.contracts.keys import RECEIPT_ARTIFACT_NAME, RESULT_ARTIFACT_NAME
from accord.contracts.status import A2AState, Status, WaitingReason

__all__ = ["mesh_for_module"]

EXAMPLE = ROOT / "docs" / "examples" / "refund_client.mjs"
PAGE = ROOT / "docs" / "clients-js.md"
ACCORD = Path(sys.executable).parent / "accord"

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]


def accord_token(mesh: Mesh, *args: str) -> str:
    """A token as the page mints it: `accord token` with the mesh's data directory and secret."""
    done = subprocess.run(
        [str(ACCORD), "token", *args],
        env={**os.environ, **mesh.env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def run_example(mesh: Mesh, tmp: Path, **env: str) -> tuple[int, list[dict[str, Any]]]:
    """The example's exit status and the JSON lines it printed."""
    node = node_env()
    shutil.copyfile(EXAMPLE, tmp / EXAMPLE.name)
    (tmp / "node_modules").symlink_to(JS / "node_modules")
    done = subprocess.run(
        ["node", EXAMPLE.name],
        cwd=tmp,
        env={**node, "ACCORD_URL": mesh.orchestrator, **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.stderr == "", done.stderr[-3000:]
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def updates(lines: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(line["update"], line["status"]["status"]) for line in lines if "update" in line]


def test_the_page_shows_the_example_verbatim() -> None:
    page = PAGE.read_text()
    assert f"```js\n{EXAMPLE.read_text()}```\n" in page


def test_an_approver_approves_the_waiting_refund(mesh_for_module: Mesh, tmp_path: Path) -> None:
    node_env()  # skip (locally) before minting when npm packages are missing
    code, lines = run_example(
        mesh_for_module,
        tmp_path,
        ACCORD_TOKEN=accord_token(mesh_for_module, "--user", "C-03"),
        ACCORD_APPROVER_TOKEN=accord_token(mesh_for_module, "--user", "ann", "--role", "approver"),
    )
    assert code == 0, lines
    assert (A2AState.INPUT_REQUIRED.value, Status.WAITING.value) in updates(lines)
    asked = A2AState.INPUT_REQUIRED.value
    waiting = [line["status"] for line in lines if line.get("update") == asked]
    assert waiting[-1]["waitingReason"] == WaitingReason.APPROVAL.value
    final = lines[-1]
    assert final["state"] == A2AState.COMPLETED.value
    assert final["status"]["status"] == Status.COMPLETED.value
    result = final[RESULT_ARTIFACT_NAME]
    assert result["decision"] == "refunded"
    assert result["approved_by"] == "ann"
    assert result["receipt"]["idempotency_key"] == f"refund:O-1004:{final['task']}"
    assert result["receipt"]["amount_cents"] == 129900
    receipt = final[RECEIPT_ARTIFACT_NAME]
    assert receipt.startswith(f"Refund receipt {result['receipt']['receipt_id']}")
    assert "Approved by: ann" in receipt


def test_a_question_is_answered_in_the_same_task(mesh_for_module: Mesh, tmp_path: Path) -> None:
    node_env()
    code, lines = run_example(
        mesh_for_module,
        tmp_path,
        ACCORD_TOKEN=accord_token(mesh_for_module, "--user", "C-01"),
        ACCORD_REQUEST="my mug arrived broken, order O-1005",
    )
    assert code == 0, lines
    question = next(line["question"] for line in lines if "question" in line)
    assert "photo" in question
    final = lines[-1]
    assert final["state"] == A2AState.COMPLETED.value
    result = final[RESULT_ARTIFACT_NAME]
    assert result["rule"] == "damage_with_evidence"
    # The refund was made by the task that asked: the answer continued it.
    assert result["receipt"]["idempotency_key"] == f"refund:O-1005:{final['task']}"


def test_a_refused_call_names_its_contract_code(mesh_for_module: Mesh, tmp_path: Path) -> None:
    node_env()
    own = accord_token(mesh_for_module, "--user", "C-04")
    code, lines = run_example(  # C-04 (five recent refunds) waits for an approver...
        mesh_for_module,
        tmp_path,
        ACCORD_TOKEN=own,
        ACCORD_APPROVER_TOKEN=own,  # ...and may not approve their own refund
        ACCORD_REQUEST="I changed my mind about the speaker, refund order O-1006",
    )
    assert code == 2, lines
    assert lines[-2]["status"]["waitingReason"] == WaitingReason.APPROVAL.value
    assert lines[-1]["error"] == ErrorCode.PERMISSION_DENIED.value, lines[-1]
    assert "refund.approve may not be asked for" in lines[-1]["message"]


def test_a_token_the_mesh_did_not_sign_is_unauthenticated(
    mesh_for_module: Mesh, tmp_path: Path
) -> None:
    node_env()
    code, lines = run_example(mesh_for_module, tmp_path, ACCORD_TOKEN="not-a-token")
    assert code == 2, lines
    assert lines == [{"error": ErrorCode.UNAUTHENTICATED.value, "message": lines[0]["message"]}]
