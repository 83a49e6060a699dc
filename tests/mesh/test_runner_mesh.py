"""A Runner given no peers uses the mesh when its services answer (``accord up``), as the
README's example promises; tests/agents/runner/test_readme_example.py covers the other half
(no mesh: in process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mesh.support import Mesh

pytestmark = pytest.mark.timeout(180)

SCRIPT = """
import asyncio
from accord.agents.runner import Runner

async def main() -> None:
    async with Runner() as runner:
        print("in_process", runner.in_process)
        async for event in runner.run_async(
            "I don't want a refund, just checking O-1002", user="C-01", session="mesh-1"
        ):
            if event.is_final_response():
                print(event.text)

asyncio.run(main())
"""


def test_a_runner_without_peers_uses_the_running_mesh(mesh: Mesh, tmp_path: Path) -> None:
    script = tmp_path / "uses_mesh.py"
    script.write_text(SCRIPT)
    env = {**os.environ, **mesh.env, "ACCORD_DATA_DIR": str(tmp_path / "own")}
    done = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "in_process False" in done.stdout
    assert "Order O-1002 was delivered on" in done.stdout
    assert "Task was destroyed" not in done.stderr
