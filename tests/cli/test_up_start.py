"""`accord up` when it cannot run (issue #36): ports already taken are found before anything
starts, named with what to do; a service that dies has its log's end printed."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from accord.cli.mesh import Mesh, installed_app
from accord.cli.up_cmd import serve_until_stopped
from tests.support import forked
from tests.support.processes import free_port, run_service

SECRET = "q8Zr2mVx7LkP4tNw9sYb3cHd6fJg1aUe5oRi0"
SERVICES = ("orchestrator", "policy", "risk", "commerce", "payments")


def test_taken_ports_are_named_before_anything_starts(tmp_path: Path) -> None:
    ports = {name: free_port() for name in SERVICES}
    urls = {f"ACCORD_{n.upper()}_URL": f"http://127.0.0.1:{p}" for n, p in ports.items()}
    env = {"ACCORD_DATA_DIR": str(tmp_path / "first"), "ACCORD_JWT_SECRET": SECRET}
    # The first mesh's risk-check (a real one), and another program on the orchestrator's port.
    with (
        run_service("risk", ["serve", "risk"], port=ports["risk"], env=env, log_dir=tmp_path),
        socket.socket() as other,
    ):
        other.bind(("127.0.0.1", ports["orchestrator"]))
        other.listen()
        second = tmp_path / "second"
        done = forked.run(
            ["up", "--no-console", "--data-dir", str(second)],
            forked.bare_env(ACCORD_JWT_SECRET=SECRET, COLUMNS="80", **urls),
        )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "refund-assistant not started: ports already in use", done.stderr
    orchestrator = next(line for line in lines if line.startswith("orchestrator:"))
    assert f"port {ports['orchestrator']} is already in use" in orchestrator
    assert "in use by another program. Stop it" in orchestrator
    assert "ACCORD_ORCHESTRATOR_URL=" in orchestrator
    risk = next(line for line in lines if line.startswith("risk:"))
    assert "in use by Accord's risk (another `accord up`?)" in risk
    assert "Stop that mesh" in risk
    assert not any(line.startswith(("policy:", "commerce:")) for line in lines)
    assert "try:" not in done.stdout  # no endpoints table: nothing runs
    assert not (second / "logs").exists()  # nothing was started


def test_a_service_that_dies_has_the_end_of_its_log_printed(tmp_path: Path) -> None:
    app = installed_app()
    mesh = Mesh(tmp_path, app, {name: free_port() for name in app.service_names})
    (tmp_path / "logs").mkdir()
    with mesh.log_path("payments").open("wb") as log:
        mesh.processes["payments"] = subprocess.Popen(
            [sys.executable, "-c", "import sys; print('database is locked'); sys.exit(3)"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    out = io.StringIO()
    assert serve_until_stopped(Console(file=out, width=200), mesh) is True
    text = out.getvalue()
    assert "payments exited with 3" in text
    assert "database is locked" in text
    assert text.index("database is locked") < text.index("stopping the mesh")
