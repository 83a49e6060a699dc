"""A pre-imported parent that forks service processes for the tests: ``python -m`` without the
imports.

A service process spends most of its start importing (a2a-sdk, mcp, SQLAlchemy, Alembic,
OpenTelemetry, pydantic...: about 1.5 s of CPU each on this machine), and the suite starts
hundreds of them on two cores. This process imports all of that once; each service is then a
``fork()`` of it that sets its own environment, arguments, working directory and log, and runs
``accord.cli.main`` as ``python -m accord.cli.main ARGS`` would. The child is a real
process of its own (its own session, so ``killpg`` and ``kill -9`` work as on any service);
only its imports are shared.

Protocol, one JSON object per line: the test process writes
``{"id": N, "args": [...], "env": {...}, "cwd": "...", "log": "...", "err": "..."}`` (stdout
to ``log``; stderr to ``err``, or to ``log`` without one) to stdin; this process
answers ``{"id": N, "pid": P}`` (or ``{"id": N, "error": "..."}``) and, whenever a child ends,
``{"exited": P, "code": C}`` (``C`` as ``Popen.returncode``: negative for a signal).

Not for everything: a child must not depend on what was imported before its environment was
set. tests/support/forked.py sends only the starts where that holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from typing import Any

# As `accord serve` sets it before importing a2a-sdk (telemetry/sdk_wrappers.py): the SDK reads
# it once, at import. A start that asks for the SDK's spans is not sent here (forked.py).
os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")

PRELOAD = (
    "accord.cli.main",
    "accord.cli.serve_cmd",
    "accord.protocol.service",
    "uvicorn.main",
    "uvicorn.lifespan.on",
    "uvicorn.loops.auto",
    "uvicorn.loops.asyncio",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.protocols.websockets.auto",
)


def _preload() -> None:
    import contextlib
    import importlib

    for name in PRELOAD:
        # An optional speed-up (httptools, websockets) may not be installed.
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    from accord.protocol.service import discover_services

    discover_services()  # every service's module, and what each imports


_out_lock = threading.Lock()


def _say(message: dict[str, Any]) -> None:
    with _out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the service process. Never returns: the command's
    SystemExit (or its uncaught exception) ends this interpreter as it would end
    ``python -m accord.cli.main`` (atexit handlers, flushed streams, exit status)."""
    try:
        os.setsid()  # its own session and process group, as start_new_session=True gives
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        # As CPython's own start does: a write to a peer that went away is an EPIPE error, not
        # the end of the process. (At SIG_DFL, a service that wrote to a peer just killed died
        # of SIGPIPE, exit -13, with nothing in its log.)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        err = request.get("err")  # stderr apart (a command's output read by a test), or none
        errors = os.open(err, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if err else log
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(errors, 2)
        for fd in {log, errors, null}:
            os.close(fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - fds 0-2 live as long as the process
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")
        os.chdir(request["cwd"])
        main_module = sys.modules["accord.cli.main"]
        sys.argv = [main_module.__file__ or "accord", *request["args"]]
    except BaseException:  # the start itself failed: say why in the log, never serve on
        import traceback

        traceback.print_exc()
        os._exit(1)
    main_module.main()
    sys.exit(0)


_living: set[int] = set()  # forked and not yet reaped: these pids cannot be anyone else's
_living_changed = threading.Condition()


def _reap_forever() -> None:
    """Tell the exit of every child as it happens (a blocking wait, on its own thread).

    A child that ended is looked at first without reaping it (WNOWAIT: its pid stays a zombie,
    ours), and reaped under the lock a signal takes: a signal is never sent to a pid that a new
    process may have been given since."""
    while True:
        with _living_changed:
            while not _living:
                _living_changed.wait()
        ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
        if ended is None:
            continue
        with _living_changed:
            pid, status = os.waitpid(ended.si_pid, 0)
            _living.discard(pid)
        _say({"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def _signal(request: dict[str, Any]) -> None:
    """Signal a child's process group, if that child is still ours (not reaped)."""
    pid, sig = int(request["signal"]), int(request["sig"])
    with _living_changed:
        ours = pid in _living
        if ours:
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:  # just forked: its setsid() has not run yet
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
    _say({"id": request["id"], "signalled": ours})


def main() -> None:
    _preload()
    threading.Thread(target=_reap_forever, daemon=True).start()
    for line in sys.stdin:
        request = json.loads(line)
        if "signal" in request:
            _signal(request)
            continue
        # Both locks across the fork: no thread is writing, and the reaper cannot reap the child
        # before it is known to be ours.
        with _out_lock, _living_changed:
            sys.stdout.flush()
            pid = os.fork() if threading.active_count() <= 2 else -1
            if pid == 0:
                _child(request)
            if pid > 0:
                _living.add(pid)
                _living_changed.notify()
        if pid < 0:
            _say({"id": request["id"], "error": "threads running: not safe to fork"})
        else:
            _say({"id": request["id"], "pid": pid})


if __name__ == "__main__":
    main()
