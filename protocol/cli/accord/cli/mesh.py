"""Start an application's services as child processes, wait for their health, stop them.

Shared by `accord up` and `accord demo`. Each service is ``python -m accord.cli.main
serve NAME --port N --app FILE`` in its own process group, in the order of its app file
(accord.protocol.app_file), with ``ACCORD_DATA_DIR`` (SQLite files and the development keys),
the app file's settings and ``ACCORD_<NAME>_URL`` set so the services find each other.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import httpx

from accord.contracts.keys import HEALTH_PATH
from accord.protocol.app_file import App, load_app
from accord.protocol.health import served_name
from accord.protocol.private_files import open_private, private_dir
from accord.protocol.settings import APP_FILE, CONSOLE_PORT, DEFAULT_HOST, current, env_name

STOP_GRACE_S: Final = 10.0
CONSOLE: Final = "console"  # the web console: started by `accord up`, not a service of the app file


class MeshError(Exception):
    """A service did not come up (its log's tail is in the message)."""


def installed_app() -> App:
    """The application built into `accord` (entry point group ``accord.apps``): what `accord
    up` runs in a folder without an app file."""
    from accord.protocol.plugins import installed_app as installed

    found = installed()
    if found is None:
        raise MeshError(f"no application is installed: give its file ({APP_FILE}, --app)")
    return load_app(found.path)


def console_address() -> tuple[str, int]:
    """Host and port of ``ACCORD_CONSOLE_URL``: where `accord console` listens."""
    parts = urlsplit(current().console_url)
    default = {"http": 80, "https": 443}.get(parts.scheme, CONSOLE_PORT)
    return parts.hostname or "127.0.0.1", parts.port or default


@dataclass
class Mesh:
    data_dir: Path
    app: App
    ports: dict[str, int]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def url(self, name: str) -> str:
        return f"http://{DEFAULT_HOST}:{self.ports[name]}"

    def log_path(self, name: str) -> Path:
        return self.data_dir / "logs" / f"{name}.log"

    def env(self) -> dict[str, str]:
        """What a client (or a service) needs to talk to this mesh."""
        out = {env_name("data_dir"): str(self.data_dir)}
        out.update(self.app.env({n: self.ports[n] for n in self.app.service_names}))
        return out

    def stop(self) -> None:
        """SIGTERM every service (reverse order), then SIGKILL what is still alive."""
        for name in reversed(list(self.processes)):
            _signal(self.processes[name], signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in self.processes.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal(proc, signal.SIGKILL)
                proc.wait(timeout=5)
        self.processes.clear()


def free_ports(names: tuple[str, ...] | None = None) -> dict[str, int]:
    """A distinct free port per name (default: the installed app's services): every socket stays
    bound until all are chosen (a port closed at once may be the kernel's next answer: two
    services would get the same)."""
    with contextlib.ExitStack() as held:
        ports: dict[str, int] = {}
        for name in names if names is not None else installed_app().service_names:
            s = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            s.bind((DEFAULT_HOST, 0))
            ports[name] = int(s.getsockname()[1])
        return ports


def port_taken(port: int, host: str = DEFAULT_HOST) -> bool:
    """Whether a server could not listen on ``host:port`` now. SO_REUSEADDR as uvicorn binds:
    a port left in TIME_WAIT by a mesh just stopped is free to it, so not taken here."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def holder(port: int, host: str = DEFAULT_HOST) -> str | None:
    """The Accord service answering on ``host:port`` (its /healthz's name), else None."""
    try:
        return served_name(httpx.get(f"http://{host}:{port}{HEALTH_PATH}", timeout=1.0))
    except httpx.HTTPError:
        return None


def start_mesh(
    data_dir: Path,
    *,
    app: App | None = None,
    ports: Mapping[str, int] | None = None,
    env: Mapping[str, str] | None = None,
    deadline_s: float = 90.0,
) -> Mesh:
    """Start the app's services (default: the installed app's, on their default ports) and
    wait for every /healthz; on failure stop what started and raise."""
    data_dir = data_dir.expanduser().resolve()
    private_dir(private_dir(data_dir) / "logs")  # secrets, databases, logs: 0700
    app = app or installed_app()
    if ports is None:
        ports = {name: app.port(name, app.service(name)) for name in app.service_names}
    mesh = Mesh(data_dir, app, dict(ports))
    # The children inherit this process's environment (PATH, OTEL_*, every ACCORD_* setting),
    # with the mesh's own on top: passed on, not read.
    full_env = {**os.environ, **mesh.env(), **(env or {})}
    try:
        for name in app.service_names:
            cmd = [
                sys.executable,
                "-m",
                "accord.cli.main",
                "serve",
                name,
                "--port",
                str(mesh.ports[name]),
                "--app",
                str(app.path),
            ]
            fd = open_private(mesh.log_path(name), os.O_WRONLY | os.O_APPEND)
            with os.fdopen(fd, "ab") as log:
                mesh.processes[name] = subprocess.Popen(
                    cmd,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=full_env,
                    start_new_session=True,
                )
        end = time.monotonic() + deadline_s
        for name in app.service_names:
            _wait_healthy(mesh, name, end)
    except BaseException:
        mesh.stop()
        raise
    return mesh


def start_console(mesh: Mesh, port: int, *, deadline_s: float = 60.0) -> str:
    """Start the web console (`accord console`, an application's command) for this mesh, as one
    more child process that `Mesh.stop` stops; wait for its health. Its URL is the one origin
    the app's agents allow browsers from (``ACCORD_CONSOLE_URL``, inherited by the services as
    started)."""
    mesh.ports[CONSOLE] = port
    cmd = [sys.executable, "-m", "accord.cli.main", CONSOLE]
    fd = open_private(mesh.log_path(CONSOLE), os.O_WRONLY | os.O_APPEND)
    with os.fdopen(fd, "ab") as log:
        mesh.processes[CONSOLE] = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **mesh.env()},  # passed on, as in start_mesh
            start_new_session=True,
        )
    _wait_healthy(mesh, CONSOLE, time.monotonic() + deadline_s)
    return mesh.url(CONSOLE)


def _wait_healthy(mesh: Mesh, name: str, end: float) -> None:
    proc = mesh.processes[name]
    url = mesh.url(name) + HEALTH_PATH
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise MeshError(f"{name} exited with {proc.returncode}:\n{log_tail(mesh, name)}")
        try:
            if served_name(httpx.get(url, timeout=1.0)) == name:  # not another service's port
                if proc.poll() is not None:  # another mesh's service answered in its stead
                    raise MeshError(
                        f"{name} exited with {proc.returncode}:\n{log_tail(mesh, name)}"
                    )
                return
        except httpx.HTTPError:
            pass  # not up yet: look again until the deadline
        time.sleep(0.1)  # poll interval; the deadline bounds the wait
    raise MeshError(f"{name} not healthy at {url} in time:\n{log_tail(mesh, name)}")


def log_tail(mesh: Mesh, name: str, chars: int = 2000) -> str:
    """The end of a service's log: why it stopped, for the person who ran the mesh."""
    path = mesh.log_path(name)
    return path.read_text(errors="replace")[-chars:] if path.exists() else "(no log)"


def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
