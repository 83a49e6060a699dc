"""`accord contract-test` is repeatable on a used mesh (issue 13).

After the README walkthrough refunded O-1001, the README's contract-test command failed three
checks (POLICY_DENIED: the built-in refunds.issue probe refunded a cent of O-1001). The probes
now write only to the kit's own order (O-9001 of C-90) under a key of each run, so the command
passes twice in a row after a refund; and the orchestrator's lifecycle checks run without a
probe file.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from accord.contracts.status import Status
from tests.mesh.mesh_support import ROOT, Mesh, mesh_for_module
from tests.mesh.support import ask, token
from tests.mesh.test_cli import accord

__all__ = ["mesh_for_module"]

pytestmark = pytest.mark.timeout(400)


def _readme_command(mesh: Mesh, junit: Path) -> subprocess.CompletedProcess[str]:
    """README.md's contract-test line as written, pointed at this mesh's ports (and with a
    JUnit report), run by a shell like a reader would."""
    line = next(
        ln.split("  #")[0].strip()
        for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if ln.startswith(".venv/bin/accord contract-test ")
    )
    cli = f"{shlex.quote(sys.executable)} -m accord.cli.main"
    command = (
        line.replace(".venv/bin/accord", cli)
        .replace("http://127.0.0.1:8701", mesh.url("policy"))
        .replace("http://127.0.0.1:8711", mesh.url("payments"))
    )
    return subprocess.run(
        f"{command} --junit {shlex.quote(str(junit))}",
        shell=True,
        env={**os.environ, **mesh.env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _skipped(junit: Path) -> list[str]:
    return [
        str(case.get("name"))
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.find("skipped") is not None
    ]


async def test_readme_contract_test_passes_twice_after_a_refund(
    mesh_for_module: Mesh, tmp_path: Path
) -> None:
    mesh = mesh_for_module
    refunded = await ask(
        mesh, "C-01", "鞋码不合适，想退款，订单 O-1001"
    )  # the README's walkthrough
    assert refunded.status is Status.COMPLETED, refunded.error
    assert (refunded.data or {})["decision"] == "refunded"
    for run in ("first", "second"):
        done = _readme_command(mesh, tmp_path / f"{run}.xml")
        assert done.returncode == 0, f"{run} run:\n{done.stdout}\n{done.stderr}"


DECLINE_CHECK = "STATUS-008 a declined request ends A2A REJECTED: failed, declined, with its code"


def test_orchestrator_lifecycle_checks_run_without_a_probe_file(
    mesh_for_module: Mesh, tmp_path: Path
) -> None:
    junit = tmp_path / "orchestrator.xml"
    done = accord(
        mesh_for_module,
        "contract-test",
        mesh_for_module.url("orchestrator"),
        "--token",
        token("C-01"),
        "--other-token",
        token("C-02"),
        "--junit",
        str(junit),
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Every lifecycle check runs from the built-in probe; only the decline check has nothing
    # to probe: the orchestrator declines nothing (docs/refund-assistant.md).
    assert _skipped(junit) == [DECLINE_CHECK], _skipped(junit)
