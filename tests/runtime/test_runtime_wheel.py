"""The runtime installed as another team's mesh installs it: accord-runtime's wheel with the two
framework wheels it needs (accord-protocol, accord-contracts), built from this tree, in a clean
venv with no application in it; a workflow of their own runs there on SQLite, its schema made
by the migrations the wheel ships.

Offline, as tests/kit/test_kit_wheel.py: the third-party packages come from uv's cache (the
lock's versions, exported as pylock.toml), the three wheels from ``--find-links``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".tools" / "bin" / "uv"  # made by `make setup`, the uv that built .venv
WHEELS = ("accord-runtime", "accord-protocol", "accord-contracts")

pytestmark = pytest.mark.timeout(240)

# A team's own workflow, nothing of the refund assistant: one node, one interrupt for a person.
WORKFLOW = """
import asyncio, importlib.util, json, sys
from accord.contracts.status import WaitingReason
from accord.runtime.workflow import Graph, NodeContext, Runtime

async def review(ctx: NodeContext) -> dict:
    answer = ctx.interrupt(WaitingReason.APPROVAL, {"doc": ctx.input["doc"]})
    return {"published": answer.value == "yes"}

async def main() -> None:
    g = Graph("review", version="1")
    g.node("review", review)
    runtime = Runtime(f"sqlite:///{sys.argv[1]}")
    runtime.register(g)
    async with runtime:
        handle = await runtime.start("review", workflow_id="w-1", input={"doc": "d-7"})
        waiting = await handle.settled()
        interrupt = waiting.interrupts[0].interrupt_id
        await runtime.resume("w-1", interrupt, "yes", principal="u:editor")
        done = await runtime.handle("w-1").settled(timeout_s=20)
        print(json.dumps({
            "waiting": waiting.status.value,
            "status": done.status.value,
            "result": done.result,
            "applications": [m for m in ("accord.agents", "accord.tools", "accord.refund_contracts")
                             if importlib.util.find_spec(m)],
        }))

asyncio.run(main())
"""


def _uv(*args: str | Path) -> None:
    done = subprocess.run(
        [str(UV), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"uv {args}: {done.stdout}{done.stderr}"


def test_the_runtime_wheel_runs_a_team_s_own_workflow_without_the_application(
    tmp_path: Path,
) -> None:
    wheels, lock, venv = tmp_path / "wheels", tmp_path / "pylock.toml", tmp_path / "venv"
    for package in WHEELS:
        _uv("build", "--offline", "--quiet", "--wheel", "--package", package, "-o", wheels)
    _uv(
        *("export", "--frozen", "--quiet", "--package", "accord-runtime", "--no-emit-workspace"),
        *("--no-dev", "--format", "pylock.toml", "-o", lock),
    )
    _uv("venv", "--quiet", "--python", os.path.realpath(sys.executable), venv)
    python = venv / "bin" / "python"
    install = ("pip", "install", "--offline", "--quiet", "--python", python)
    _uv(*install, "-r", lock)
    _uv(*install, "--find-links", wheels, "accord-runtime")

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCORD_", "UV_"))}
    env["ACCORD_DATA_DIR"] = str(tmp_path / "data")
    done = subprocess.run(
        [str(python), "-c", WORKFLOW, str(tmp_path / "workflows.db")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "waiting": "waiting",
        "status": "completed",
        "result": {"review": {"published": True}},
        "applications": [],
    }
