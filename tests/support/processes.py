"""Start real service processes for tests and wait for their health with a deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from accord.protocol.health import served_name
from tests.support import forked
from tests.support.ports import free_port

__all__ = ["Service", "free_port", "run_service", "wait_healthy"]


@dataclass
class Service:
    name: str
    port: int
    process: subprocess.Popen[bytes] | forked.ForkedProcess
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            _signal_group(self.process, sig)
            self.process.wait(timeout=15)

    def stop(self) -> None:
        if self.process.poll() is None:
            _signal_group(self.process, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def _signal_group(process: subprocess.Popen[bytes] | forked.ForkedProcess, sig: int) -> None:
    """Signal a service's process group (each leads its own)."""
    if isinstance(process, forked.ForkedProcess):
        process.send_signal(sig)  # by its parent: a reaped pid may be someone else's
    else:
        os.killpg(process.pid, sig)


def wait_healthy(
    url: str,
    process: subprocess.Popen[bytes] | None = None,
    deadline_s: float = 30.0,
    path: str = "/healthz",
    service: str | None = None,
) -> None:
    """Poll ``url + path`` until it answers 200, the process dies, or the deadline passes.

    With ``service``, the answer must name it: another service on the port is not healthy.
    """
    end = time.monotonic() + deadline_s
    last = "no answer"
    while time.monotonic() < end:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before healthy")
        try:
            r = httpx.get(url + path, timeout=1.0)
            if r.status_code == 200 and service is not None and served_name(r) != service:
                last = f"{served_name(r)!r} answers there, not {service!r}"
            elif r.status_code == 200:
                return
            else:
                last = f"HTTP {r.status_code}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        time.sleep(0.05)  # poll interval, bounded by the deadline above
    raise TimeoutError(f"{url}{path} not healthy within {deadline_s}s ({last})")


@contextmanager
def run_service(
    name: str,
    args: Sequence[str],
    *,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    log_dir: Path,
    health_path: str = "/healthz",
    deadline_s: float = 30.0,
    python: str | None = None,
    cwd: Path | None = None,
) -> Iterator[Service]:
    """Run ``python -m accord.cli.main serve NAME`` (or ``args``) until the block ends;
    ``python`` and ``cwd`` as in ``forked.start`` (another release's interpreter)."""
    port = port or free_port()
    log_path = log_dir / f"{name}-{port}.log"
    full_env = {**os.environ, **(env or {})}
    proc = forked.start([*args, "--port", str(port)], full_env, log_path, python=python, cwd=cwd)
    service = Service(name=name, port=port, process=proc, log_path=log_path)
    try:
        # `serve NAME` answers its name: a port taken by someone else is not a start.
        named = args[1] if len(args) > 1 and args[0] == "serve" else None
        wait_healthy(service.url, proc, deadline_s, health_path, service=named)
    except Exception:
        service.stop()
        raise RuntimeError(f"{name} did not start; log:\n{service.log()[-4000:]}") from None
    try:
        yield service
    finally:
        service.stop()
