"""docs/examples/runner_demo.py runs as documented and prints the event stream."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

DEMO = Path(__file__).resolve().parents[3] / "docs" / "examples" / "runner_demo.py"


def test_the_runner_demo_prints_calls_and_final_answers(data_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(DEMO)],
        env={**os.environ, "ACCORD_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for call in ("orders.lookup", "policy-check", "risk-check", "refunds.issue"):
        assert f"-> call {call}" in out
    assert "[completed] 订单 O-1001 的退款" in out
    assert "[waiting] " in out
    assert "order O-1005 has been issued" in out
    assert "policy-check <- policy-check: waiting" in out
    assert "runs, success 100%" in out
