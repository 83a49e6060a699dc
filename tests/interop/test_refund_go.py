"""The refund conversation, approval included, from Go: tests/interop/go, a client on the official
A2A SDK for Go (github.com/a2aproject/a2a-go/v2, A2A 1.0 over JSON-RPC), against the orchestrator
of a running mesh. The interop matrix's (Go, Python) cell (docs/interop.md).

The client is built once for the module with the Go toolchain (its build cache keeps a rebuild
cheap) and run as a process; it prints what it saw, judged as every client's conversation is
(tests/mesh/client_conversation.py): the customer's large refund waits for an approver, the
customer's own approval is refused with the typed PERMISSION_DENIED, an approver approves, the
customer's task ends refunded with a receipt, and a damage claim's question is answered in the
same task. Skipped locally when the
`go` command is absent; on CI it must run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Final

import pytest
from tests.mesh import interop_matrix
from tests.mesh.client_conversation import assert_conversation, run_client
from tests.mesh.mesh_support import ROOT, Mesh, declared, mesh_for_module

__all__ = ["mesh_for_module"]

pytestmark = [pytest.mark.go, pytest.mark.timeout(300)]

CLIENT: Final = ROOT / "tests" / "interop" / "go"
USUAL_GO: Final = Path("/usr/local/go/bin/go")
A2A_GO: Final = "github.com/a2aproject/a2a-go/v2"
APPROVER: Final = "approver-go"


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
        out = run_client([str(client)], mesh_for_module, APPROVER, timeout=150)
        assert_conversation(out, APPROVER)
        # a2a-go v2.1.0 cannot decode A2A 1.0's list of ErrorInfo in `error.data`, which is why
        # the client reads the kept wire error; when this fails, the SDK reads it: drop the keeper.
        assert "cannot unmarshal array" in out["own"]["sdk"], out["own"]
