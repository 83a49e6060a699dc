"""`accord refund` and `accord chat` follow their task across an orchestrator restart (#15).

Real processes: the refund workflow stops at a pause point (after the order lookup) while the
command streams its progress; the orchestrator is killed with SIGKILL and started again, and
the command, still running, ends with the task's outcome (refunded, exit 0), not a connection
error. The ledger holds one refund for the order.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mesh.support import PAUSE_MARKER, Mesh, running_mesh

pytestmark = pytest.mark.timeout(360)

REFUND_ORDER, CHAT_ORDER = "O-1001", "O-1003"
POINT = "order.after_lookup"
PAUSE_ENV = {
    "ACCORD_TEST_PAUSE": f"{POINT}@{REFUND_ORDER}:120,{POINT}@{CHAT_ORDER}:120",
    "ACCORD_DEV": "1",  # pause points are refused outside development mode
}


@pytest.fixture(scope="module")
def follow_mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with running_mesh(tmp_path_factory.mktemp("follow"), orchestrator_env=PAUSE_ENV) as mesh:
        yield mesh


def _accord(mesh: Mesh, out: Path, *args: str, stdin: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, **mesh.env, "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "accord.cli.main", *args],
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=out.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
    )
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)  # one request, then end of input: chat quits after its answer
        proc.stdin.close()
    return proc


def test_refund_and_chat_end_with_the_outcome_across_a_kill_9(
    follow_mesh: Mesh, tmp_path: Path
) -> None:
    mesh = follow_mesh
    refund_out, chat_out = tmp_path / "refund.out", tmp_path / "chat.out"
    refund = _accord(mesh, refund_out, "refund", f"鞋码不合适，想退款，订单 {REFUND_ORDER}")
    chat = _accord(
        mesh,
        chat_out,
        "chat",
        "--user",
        "C-02",
        stdin=f"my jacket from order {CHAT_ORDER} arrived torn, photo IMG_7.jpg\n",
    )
    try:
        for order in (REFUND_ORDER, CHAT_ORDER):  # both workflows stopped, both commands waiting
            mesh.wait_for_log(f"{PAUSE_MARKER} {POINT}@{order}", 120.0)
        assert refund.poll() is None
        assert chat.poll() is None
        mesh.restart_orchestrator({"ACCORD_TEST_PAUSE": ""})  # SIGKILL, then start again
        refund_code = refund.wait(timeout=180)
        chat_code = chat.wait(timeout=180)
    finally:
        for proc in (refund, chat):
            if proc.poll() is None:
                proc.kill()
    refund_text, chat_text = refund_out.read_text(), chat_out.read_text()
    assert refund_code == 0, refund_text
    assert "refunded" in refund_text, refund_text
    assert chat_code == 0, chat_text
    assert "refunded" in chat_text, chat_text
    for text in (refund_text, chat_text):
        assert "UNAVAILABLE" not in text, text
        assert "INTERNAL" not in text, text
    rows = mesh.refund_rows()
    assert rows.get(REFUND_ORDER) == 1, rows
    assert rows.get(CHAT_ORDER) == 1, rows
