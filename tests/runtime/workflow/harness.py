"""Run the crash worker as a real process, kill it, and look at what it left behind."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("crash_worker.py")
IDS = ["w1", "w2", "w3"]
WAIT_S = 90


class Harness:
    def __init__(self, url: str, tmp: Path) -> None:
        self.url = url
        self.effects = tmp / "effects.db"
        self.procs: list[subprocess.Popen[str]] = []

    def spawn(self, mode: str, *extra: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, str(WORKER), self.url, str(self.effects), mode, ",".join(IDS), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.procs.append(proc)
        return proc

    def finish(self, mode: str, *extra: str) -> dict[str, Any]:
        proc = self.spawn(mode, *extra)
        out, err = proc.communicate(timeout=2 * WAIT_S)  # the worker gives up after 90 s
        assert proc.returncode == 0, err
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        if not self.effects.exists():
            return []
        db = sqlite3.connect(self.effects, timeout=30)
        try:
            return db.execute(sql, args).fetchall()
        except sqlite3.OperationalError:  # tables not created yet
            return []
        finally:
            db.close()

    def wait_for(self, condition: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
        # Only a failure waits this long; a passing run returns in 1-4 s. It is generous
        # because the suite runs on parallel workers: on a loaded 2-core CI machine a worker
        # process was seen to need more than 30 s to start and run its three workflows.
        deadline = time.monotonic() + WAIT_S
        while not condition():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, (
                f"condition not reached within {WAIT_S} s; observed so far: "
                f"{self.query('SELECT type, node, count(*) FROM observed GROUP BY type, node')}"
            )
            time.sleep(0.02)

    def observed(self, kind: str, node: str | None = None) -> int:
        rows = self.query(
            "SELECT count(*) FROM observed WHERE type = ? AND coalesce(node, '') = ?",
            kind,
            node or "",
        )
        return int(rows[0][0]) if rows else 0

    def runs(self) -> dict[str, Counter[str]]:
        counts: dict[str, Counter[str]] = {w: Counter() for w in IDS}
        for workflow_id, node in self.query("SELECT workflow_id, node FROM runs"):
            counts[workflow_id][node] += 1
        return counts

    def kill(self, proc: subprocess.Popen[str]) -> None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
