"""Start time: each service from spawn to a 200 on /readyz, and the CLI's wall time.

    .venv/bin/python bench/startup.py [--runs 5] [--services orchestrator,policy]

The five services are started as `accord up` does (SQLite, a temporary data directory, free
ports); then each in turn is stopped and started N times (``accord serve NAME --port P``) while
the other four run, polling /readyz every 5 ms until it answers 200: a restart, what bounds an
outage (risk is ready only once its tool server is connected, so the others must run).
Baselines in the same run on the same machine: a bare ``python -c pass`` and a minimal
uvicorn + Starlette app that answers /readyz. The CLI rows time ``accord --help``, ``accord token
--help`` and ``accord token --user C-01`` (a mint) against ``python -c pass``.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from accord.cli.mesh import Mesh, free_ports, start_mesh

SERVICES = ("orchestrator", "policy", "risk", "commerce", "payments")
POLL_S = 0.005  # readiness poll; 5 ms bounds the measurement's own error
DEADLINE_S = 120.0

MINIMAL_APP = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def ready(request):
    return JSONResponse({"status": "ready"})
app = Starlette(routes=[Route("/readyz", ready)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def accord_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "accord.cli.main", *args]


def time_to_ready(cmd: Sequence[str], port: int, env: dict[str, str]) -> float:
    """Seconds from spawn to the first 200 on /readyz; the process is stopped after."""
    url = f"http://127.0.0.1:{port}/readyz"
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        with httpx.Client(timeout=1.0) as client:
            while time.perf_counter() - start < DEADLINE_S:
                if proc.poll() is not None:
                    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                    raise RuntimeError(f"{cmd} exited with {proc.returncode}:\n{err[-2000:]}")
                try:
                    if client.get(url).status_code == 200:
                        return time.perf_counter() - start
                except httpx.HTTPError:
                    pass
                time.sleep(POLL_S)
        raise TimeoutError(f"{url} not ready within {DEADLINE_S} s")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def wall_time(cmd: Sequence[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def sample(runs: int, once: Callable[[], float]) -> list[float]:
    return [once() for _ in range(runs)]


def row(name: str, times: list[float], baseline: float) -> str:
    med = statistics.median(times)
    return f"  {name:<26} {med * 1000:9.0f} {max(times) * 1000:9.0f} {med / baseline:8.1f}x"


def restart_times(mesh: Mesh, name: str, runs: int, env: dict[str, str]) -> list[float]:
    """Stop ``name`` in the running mesh, time ``runs`` starts of it, leave it running again."""
    port = mesh.ports[name]
    cmd = accord_cmd("serve", name, "--port", str(port))
    old = mesh.processes.pop(name)
    os.killpg(old.pid, signal.SIGTERM)
    old.wait(timeout=30)
    times = sample(runs, lambda: time_to_ready(cmd, port, env))
    mesh.processes[name] = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    time_to_ready_of_running(port)
    return times


def time_to_ready_of_running(port: int) -> None:
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(POLL_S)
    raise TimeoutError(f"port {port} not ready again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--services", default=",".join(SERVICES))
    args = parser.parse_args()
    names = [n for n in args.services.split(",") if n]

    with tempfile.TemporaryDirectory(prefix="accord-startup-") as tmp:
        data = Path(tmp)
        base_env = {k: v for k, v in os.environ.items() if k != "ACCORD_DATABASE_URL"}
        base_env.update({"ACCORD_DATA_DIR": str(data), "ACCORD_LOG_LEVEL": "WARNING"})

        bare = sample(args.runs, lambda: wall_time([sys.executable, "-c", "pass"], base_env))
        bare_med = statistics.median(bare)

        def minimal_once() -> float:
            port = free_port()
            return time_to_ready([sys.executable, "-c", MINIMAL_APP, str(port)], port, base_env)

        minimal = sample(args.runs, minimal_once)
        minimal_med = statistics.median(minimal)

        print(
            f"restart to /readyz 200 with the other four running, {args.runs} runs each "
            "(ms; ratio: median / minimal uvicorn app)"
        )
        print(f"  {'':<26} {'median':>9} {'max':>9} {'ratio':>9}")
        print(row("python -c pass", bare, minimal_med))
        print(row("minimal uvicorn app", minimal, minimal_med), flush=True)
        # The first start creates and seeds the databases; the restarts after it find them.
        mesh = start_mesh(data, ports=free_ports(), env={"ACCORD_LOG_LEVEL": "WARNING"})
        env = {**base_env, **mesh.env()}
        try:
            for port in mesh.ports.values():
                time_to_ready_of_running(port)
            for name in names:
                print(row(name, restart_times(mesh, name, args.runs, env), minimal_med), flush=True)
        finally:
            mesh.stop()

        print(f"\nCLI wall time, {args.runs} runs each (ms; ratio: median / python -c pass)")
        print(f"  {'':<26} {'median':>9} {'max':>9} {'ratio':>9}")
        print(row("python -c pass", bare, bare_med))
        for label, cli in (
            ("accord --help", ["--help"]),
            ("accord token --help", ["token", "--help"]),
            ("accord token --user C-01", ["token", "--user", "C-01"]),
        ):
            times = sample(args.runs, lambda cli=cli: wall_time(accord_cmd(*cli), base_env))
            print(row(label, times, bare_med), flush=True)


if __name__ == "__main__":
    main()
