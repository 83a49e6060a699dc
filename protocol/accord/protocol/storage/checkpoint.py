"""SQLite WAL checkpoints in a thread of their own, off every commit path.

With ``synchronous=NORMAL`` a commit writes the WAL and does not fsync; the checkpoint, which
copies the WAL into the database file and fsyncs, is the one slow step. Automatic checkpoints
are switched off on the writer's connection and this thread runs a PASSIVE checkpoint (it never
blocks writers or readers) when nudged every N commits, or every few seconds, on its own
connection: the event loop never waits for the disk.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading


class Checkpointer:
    def __init__(self, path: str, *, idle_s: float = 5.0) -> None:
        self._path = path
        self._idle_s = idle_s
        self._wake = threading.Event()
        self._stopping = False
        self._final = "PASSIVE"
        self._thread = threading.Thread(target=self._run, name="accord-wal-checkpoint", daemon=True)
        self._thread.start()

    def nudge(self) -> None:
        self._wake.set()

    def stop(self, final: str = "TRUNCATE") -> None:
        """Checkpoint once more (TRUNCATE: leave an empty WAL behind) and end the thread."""
        self._final = final
        self._stopping = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout=1000")
            while True:
                self._wake.wait(timeout=self._idle_s)
                self._wake.clear()
                mode = self._final if self._stopping else "PASSIVE"
                with contextlib.suppress(sqlite3.Error):  # busy: next time
                    conn.execute(f"PRAGMA wal_checkpoint({mode})")
                if self._stopping:
                    return
        finally:
            conn.close()
