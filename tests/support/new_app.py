"""`accord new NAME`'s application served by `accord up` and passed by `accord contract-test`,
as its README says: shared by tests/apps/test_new_app.py (this checkout's `accord`) and
tests/cli/test_cli_wheel.py (the framework's wheels alone, in a clean venv)."""

from __future__ import annotations

import os
import signal
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Final

from tests.support.processes import wait_healthy

NAME: Final = "hello-desk"
# The checks a read-only tool about no customer cannot take: the scaffold's listed skips.
LISTED_SKIPS: Final = {"TOOL-006", "TOOL-007", "TOOL-011", "TOOL-012"}


def env_for(home: Path, bin_dir: Path) -> dict[str, str]:
    """Nothing of the test process's ACCORD_* environment: ``bin_dir``'s `accord` first."""
    python = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), **python}


def accord(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["accord", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def serve_and_check(folder: Path, env: dict[str, str], agent_port: int, tool_port: int) -> None:
    """`accord up` in ``folder``, then `accord contract-test` there: no failure, no skip beyond
    the listed ones, the checks the scaffold exists to show passed; Ctrl-C stops it cleanly."""
    log = (folder / "up.log").open("wb")
    up = subprocess.Popen(
        ["accord", "up"],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{agent_port}", up, deadline_s=120, service=NAME)
        wait_healthy(f"http://127.0.0.1:{tool_port}", up, deadline_s=10, service=f"{NAME}-faq")
        junit = folder / "kit.xml"
        checked = accord(["contract-test", "--junit", str(junit)], folder, env)
        assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
        cases = ET.parse(junit).getroot().iter("testcase")
        outcomes: dict[str, set[str]] = {"pass": set(), "skip": set(), "fail": set()}
        for case in cases:
            kind = (
                "skip"
                if case.find("skipped") is not None
                else (
                    "fail"
                    if case.find("failure") is not None or case.find("error") is not None
                    else "pass"
                )
            )
            outcomes[kind].add(case.get("name", "").split(" ")[0])
        assert not outcomes["fail"]
        assert outcomes["skip"] <= LISTED_SKIPS, outcomes["skip"]
        # The checks the scaffold exists to show: waiting for input, declining, access, tenancy.
        assert {
            "AGENT-005",
            "STATUS-008",
            "AGENT-009",
            "AGENT-004",
            "TOOL-005",
            "TOOL-010",
        } <= outcomes["pass"]
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        assert up.wait(timeout=30) == 0
        log.close()
    assert "stopped" in (folder / "up.log").read_text()
