"""Start a service as a fork of the pre-imported parent (tests/support/zygote.py) when that is
the same as ``python -m accord.cli.main ARGS``, else as that command.

What a fork cannot honour, because the parent imported before the child's environment was set:
a contracts directory of its own (``ACCORD_CONTRACTS_DIR``: the contract files are read at
import), a2a-sdk's spans (``ACCORD_OTEL_LIBRARY_SPANS``, ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED``:
read at the SDK's import), another interpreter or ``PYTHON*`` variables. Those starts, and every
start when ``ACCORD_TEST_NO_FORK=1``, run the command itself.

The returned object answers what tests ask of a ``subprocess.Popen``: ``pid``, ``returncode``,
``poll()``, ``wait(timeout)``, ``send_signal``, ``terminate``, ``kill``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final

NO_FORK: Final = "ACCORD_TEST_NO_FORK"
"""``1`` in this process's environment or in a start's: that start runs the command itself."""

IMPORT_TIME_VARIABLES: Final = (
    "ACCORD_CONTRACTS_DIR",
    "ACCORD_OTEL_LIBRARY_SPANS",
    "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED",
)


class ForkedProcess:
    """A child of the zygote, seen from the test process (which is not its parent)."""

    def __init__(self, zygote: _Zygote, pid: int, args: Sequence[str]) -> None:
        self._zygote = zygote
        self.pid = pid
        self.args = list(args)

    @property
    def returncode(self) -> int | None:
        return self._zygote.exit_code(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self._zygote.wait_exit(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def send_signal(self, sig: int) -> None:
        """Signal the child's process group (it leads one, as ``start_new_session`` makes it).
        Sent by the parent, which has not reaped the child yet if it signals it at all: from
        here, a pid already reaped might be someone else's by now."""
        if self.returncode is None:
            self._zygote.signal(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _Zygote:
    def __init__(self) -> None:
        # Its imports must not see what one test set for its own services.
        env = {k: v for k, v in os.environ.items() if k not in IMPORT_TIME_VARIABLES}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.zygote"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=Path(__file__).resolve().parents[2],
            text=True,
            bufsize=1,
        )
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._stdin: IO[str] = self._proc.stdin
        self._changed = threading.Condition()
        self._replies: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, int] = {}
        self._next = 0
        self._gone = False
        threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True).start()

    def _read(self, out: IO[str]) -> None:
        for line in out:
            message = json.loads(line)
            with self._changed:
                if "exited" in message:
                    self._exits[int(message["exited"])] = int(message["code"])
                else:
                    self._replies[int(message["id"])] = message
                self._changed.notify_all()
        with self._changed:
            self._gone = True
            self._changed.notify_all()

    def spawn(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        log_path: Path,
        deadline_s: float,
        err_path: Path | None = None,
        cwd: Path | None = None,
    ) -> ForkedProcess | None:
        with self._changed:
            self._next += 1
            ident = self._next
            request = {
                "id": ident,
                "args": list(args),
                "env": dict(env),
                "cwd": str(cwd) if cwd is not None else os.getcwd(),
                "log": str(log_path),
                "err": str(err_path) if err_path is not None else None,
            }
            self._stdin.write(json.dumps(request) + "\n")
            self._stdin.flush()
            end = time.monotonic() + deadline_s
            while ident not in self._replies and not self._gone:
                if not self._changed.wait(max(0.0, end - time.monotonic())):
                    # Not a fallback to the command: the parent may still fork this child, and
                    # two services would then race for one port.
                    raise TimeoutError(f"the zygote did not answer within {deadline_s} s")
            reply = self._replies.pop(ident, None)
        if reply is None or "pid" not in reply:
            return None  # the zygote is gone or refused to fork: nothing was started
        return ForkedProcess(self, int(reply["pid"]), args)

    def signal(self, pid: int, sig: int, deadline_s: float = 60.0) -> bool:
        """Have the parent signal ``pid``'s group; False when it had ended already."""
        with self._changed:
            self._next += 1
            ident = self._next
            self._stdin.write(json.dumps({"id": ident, "signal": pid, "sig": int(sig)}) + "\n")
            self._stdin.flush()
            end = time.monotonic() + deadline_s
            while ident not in self._replies and not self._gone:
                if not self._changed.wait(max(0.0, end - time.monotonic())):
                    raise TimeoutError(f"the zygote did not answer within {deadline_s} s")
            reply = self._replies.pop(ident, {})
        return bool(reply.get("signalled"))

    def exit_code(self, pid: int) -> int | None:
        with self._changed:
            return self._exits.get(pid)

    def wait_exit(self, pid: int, timeout: float | None) -> int | None:
        end = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while pid not in self._exits:
                left = None if end is None else end - time.monotonic()
                if self._gone or (left is not None and left <= 0):
                    return self._exits.get(pid)
                self._changed.wait(left)
            return self._exits[pid]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()


_zygote: _Zygote | None = None
_zygote_lock = threading.Lock()


def _shared() -> _Zygote:
    global _zygote
    with _zygote_lock:
        if _zygote is None:
            _zygote = _Zygote()
            atexit.register(_zygote.close)
        return _zygote


def signal_group(pid: int, sig: int) -> bool:
    """Have the zygote signal its child ``pid``'s process group: False (nothing sent) when
    that child has ended and been reaped, whatever now holds the pid."""
    return _shared().signal(pid, sig)


def bare_env(**values: str) -> dict[str, str]:
    """A command's environment with nothing of this process's but ``PATH`` and the interpreter's
    own ``PYTHON*`` variables (which a fork of the zygote shares, so such a start stays a fork),
    plus ``values``: no ``ACCORD_*`` setting of the test process reaches the command."""
    python = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
    return {"PATH": "/usr/bin:/bin", **python, **values}


def forkable(env: Mapping[str, str]) -> bool:
    """Whether a child of the zygote behaves as ``python -m accord.cli.main`` would."""
    if os.environ.get(NO_FORK) == "1" or env.get(NO_FORK) == "1":
        return False
    python = {k for k in os.environ.keys() | env.keys() if k.startswith("PYTHON")}
    if any(env.get(k) != os.environ.get(k) for k in python):
        return False
    return not any(env.get(k) not in (None, "", "false") for k in IMPORT_TIME_VARIABLES)


def start(
    args: Sequence[str],
    env: Mapping[str, str],
    log_path: Path,
    *,
    python: str | None = None,
    cwd: Path | None = None,
) -> ForkedProcess | subprocess.Popen[bytes]:
    """``python -m accord.cli.main ARGS`` with ``env``, its output appended to ``log_path``: a
    fork of the zygote when it can be, else that very command. ``python`` is another
    interpreter (another release's environment: never a fork; its ``accord ARGS``), ``cwd`` the
    command's directory (default: this process's)."""
    other = python is not None and python != sys.executable
    if not other and forkable(env):
        forked = _shared().spawn(args, env, log_path, deadline_s=120.0, cwd=cwd)
        if forked is not None:
            return forked
    # Another release's: its `accord` command, beside its interpreter (the module behind it
    # moved in 0.3, accord.agents.cli to accord.cli; the command did not).
    cmd = (
        [str(Path(python).parent / "accord"), *args]
        if other and python is not None
        else [sys.executable, "-m", "accord.cli.main", *args]
    )
    with log_path.open("ab") as log:
        return subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )


def run(
    args: Sequence[str],
    env: Mapping[str, str] | None = None,
    *,
    timeout: float = 120.0,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([python, -m, accord.cli.main, *args], capture_output=True,
    text=True)``, as a fork of the zygote when it can be: a command's whole run, its exit
    status, stdout and stderr. ``env`` is the whole environment (default: this process's)."""
    full = dict(os.environ if env is None else env)
    cmd = [sys.executable, "-m", "accord.cli.main", *args]
    if forkable(full):
        with tempfile.TemporaryDirectory(prefix="accord-run-") as where:
            out, err = Path(where) / "stdout", Path(where) / "stderr"
            child = _shared().spawn(args, full, out, 120.0, err_path=err, cwd=cwd)
            if child is not None:
                try:
                    code = child.wait(timeout)
                except subprocess.TimeoutExpired:
                    child.kill()
                    raise
                return subprocess.CompletedProcess(cmd, code, _read(out), _read(err))
    return subprocess.run(
        cmd, env=full, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
