"""The refund conversation, approval included, from Go: tests/interop/go, a client on the official
A2A SDK for Go (github.com/a2aproject/a2a-go/v2, A2A 1.0 over JSON-RPC), against the orchestrator
of a running mesh. The interop matrix's (Go, Python) cell (docs/interop.md).

The client is built once for the module with the Go toolchain (its build cache keeps a rebuild
cheap) and run as a process; it prints what it saw and this test asserts the conversation:
the customer's large refund waits for an approver, the customer's own approval is refused with
the typed PERMISSION_DENIED, an approver approves, the customer's task ends refunded with a
receipt, and a damage claim's question is answered in the same task. Skipped locally when the
`go` command is absent; on CI it must run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest
from tests.mesh import interop_matrix
from tests.mesh.mesh_support import ROOT, Mesh, declared, mesh_for_module, token

from accord.contracts.errors import ErrorCode
from accord.contracts.status import A2AState, Status, WaitingReason

__all__ = ["mesh_for_module"]

pytestmark = [pytest.mark.go, pytest.mark.timeout(300)]

CLIENT: Final = ROOT / "tests" / "interop" / "go"
USUAL_GO: Final = Path("/usr/local/go/bin/go")
A2A_GO: Final = "github.com/a2aproject/a2a-go/v2"


def _go() -> str:
    found = shutil.which("go") or (str(USUAL_GO) if USUAL_GO.is_file() else None)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("go must be installed on CI")
        pytest.skip("go is not installed: the Go client needs the Go toolchain")
    return found


def _sdk_version() -> str:
    for line in (CLIENT / "go.mod").read_text().splitlines():
        parts = line.split()
        if parts[:1] == [A2A_GO]:
            return f"a2a-go {parts[1]}"
    raise AssertionError(f"{A2A_GO} is not required by {CLIENT / 'go.mod'}")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    binary = tmp_path_factory.mktemp("go-client") / "refund-client"
    built = subprocess.run(
        [_go(), "build", "-o", str(binary), "."],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return binary


def run_conversation(binary: Path, mesh: Mesh) -> dict[str, Any]:
    done = subprocess.run(
        [
            str(binary),
            mesh.orchestrator,
            token("C-03"),
            token("approver-go", "approver"),
            token("C-01"),
        ],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_go_client_holds_the_refund_conversation(client: Path, mesh_for_module: Mesh) -> None:
    said = declared(mesh_for_module, "orchestrator")
    with interop_matrix.cell(
        "Go",
        "Python",
        client_version=_sdk_version(),
        service_contract=said.service_contract,
        note="ask, refused self-approval (typed PERMISSION_DENIED), approve, receipt; O-1005 "
        "evidence answered in the same task",
    ):
        out = run_conversation(client, mesh_for_module)

        ask = out["ask"]
        assert ask["state"] == A2AState.INPUT_REQUIRED.value
        assert ask["meta"]["status"] == Status.WAITING.value
        assert ask["meta"]["waitingReason"] == WaitingReason.APPROVAL.value
        assert "approver" in ask["question"]

        own = out["own"]  # refused before any task: the typed contract error, read from the wire
        assert own["code"] == ErrorCode.PERMISSION_DENIED.value, own
        assert "refund.approve may not be asked for" in own["message"], own
        # a2a-go v2.1.0 cannot decode A2A 1.0's list of ErrorInfo in `error.data`, which is why
        # the client reads the kept wire error; when this fails, the SDK reads it: drop the keeper.
        assert "cannot unmarshal array" in own["sdk"], own

        approve = out["approve"]
        assert approve["state"] == A2AState.COMPLETED.value
        assert approve["answer"]["task_id"] == ask["id"]
        assert approve["answer"]["outcome"]["result"]["decision"] == "refunded"

        final = out["final"]
        assert final["id"] == ask["id"]
        assert final["state"] == A2AState.COMPLETED.value
        result = final["answer"]
        assert result["decision"] == "refunded"
        assert result["approved_by"] == "approver-go"
        assert result["receipt"]["idempotency_key"] == f"refund:O-1004:{ask['id']}"
        assert result["receipt"]["amount_cents"] == 129900

        evidence = out["evidence"]
        asked = evidence["asked"]
        assert asked["state"] == A2AState.INPUT_REQUIRED.value
        assert asked["meta"]["waitingReason"] == WaitingReason.INPUT.value
        assert "photo" in asked["question"]
        answered = evidence["answered"]
        assert evidence["sameTask"] is True
        assert answered["state"] == A2AState.COMPLETED.value
        assert answered["answer"]["decision"] == "refunded"
        assert answered["answer"]["rule"] == "damage_with_evidence"
