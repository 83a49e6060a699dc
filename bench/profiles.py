"""Sampling profiles of running services with py-spy, and a short text summary of each.

Used by ``bench/refund_e2e.py --profile DIR``: py-spy attaches to the service processes from
outside (ptrace), so the services carry no profiling hook. Each profile is py-spy's "raw"
format (collapsed stacks, one ``frame;frame;... count`` line per distinct stack); the summary
is the top frames by own samples and by inclusive samples, which is what docs/performance.md
quotes.
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

PY_SPY = Path(sys.executable).with_name("py-spy")


class Profiler:
    """py-spy ``record`` on each named pid until :meth:`stop`."""

    def __init__(self, out_dir: Path, pids: dict[str, int], rate: int = 100) -> None:
        self.out_dir = out_dir
        self.out_dir.mkdir(parents=True, exist_ok=True)
        exe = str(PY_SPY) if PY_SPY.exists() else shutil.which("py-spy")
        if exe is None:
            raise RuntimeError("py-spy is not installed (make setup installs the dev tools)")
        self.procs = {
            name: subprocess.Popen(
                [
                    exe,
                    "record",
                    "--pid",
                    str(pid),
                    "--rate",
                    str(rate),
                    "--format",
                    "raw",
                    "--output",
                    str(out_dir / f"{name}.txt"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for name, pid in pids.items()
        }

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        for proc in self.procs.values():
            proc.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Leaf frames where a thread waits rather than works (py-spy cannot always tell idle threads).
IDLE_LEAVES = ("select", "Condition.wait", "_worker", "poll")
STDLIB_TOP = frozenset({"asyncio", "json", "http", "email", "concurrent", "logging", "importlib"})


def _frame(frame: str) -> str:
    # "function (path/to/module.py:123)" -> "function (to/module.py)": lines split one function
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    parts = Path(path).parts
    short = "/".join(parts[-2:]) if parts else path
    return f"{name} ({short})"


def _package(frame: str) -> str | None:
    """The distribution a frame belongs to (py-spy shows paths below site-packages), or for
    ours the package and module; None for the standard library."""
    path = frame.partition(" (")[2].rsplit(":", 1)[0]
    top = path.split("/", 1)[0]
    if "/" not in path or top in STDLIB_TOP or path.startswith("<"):
        return None
    if top in ("protocol", "agents", "tools", "contracts"):
        return "accord " + "/".join(path.split("/")[:2])
    return top


def summarise(path: Path, seconds: float, rate: int = 100, top: int = 12) -> str:
    """Busy samples of one raw profile: by the package of the innermost non-stdlib frame, and
    the top functions by own samples. Samples whose leaf is a wait are left out."""
    own: collections.Counter[str] = collections.Counter()
    packages: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = [f for f in stack.split(";") if f]
        if not frames or frames[-1].partition(" (")[0].endswith(IDLE_LEAVES):
            continue
        count = int(count_text)
        total += count
        own[_frame(frames[-1])] += count
        found = next((p for p in map(_package, reversed(frames)) if p is not None), "stdlib")
        packages[found] += count
    if not total:
        return f"{path.stem}: no busy samples\n"
    lines = [f"{path.stem}: {total} busy samples in {seconds:.1f} s at {rate} Hz"]
    lines.append("  by package:")
    lines += [f"    {n / total:6.1%}  {p}" for p, n in packages.most_common(top)]
    lines.append("  own time:")
    lines += [f"    {n / total:6.1%}  {f}" for f, n in own.most_common(top)]
    return "\n".join(lines) + "\n"
