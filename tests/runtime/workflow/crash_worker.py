"""A workflow process for the crash tests: the test kill -9s it and starts another.

    python crash_worker.py URL EFFECTS MODE IDS [--block b,c] [--approval] [--timeout S]

MODE `start` starts the workflows and then waits to be killed. MODE `recover` recovers the
workflows of dead owners, waits until every id is settled and prints their snapshots as
JSON. MODE `resume` answers every pending interrupt with "approve", then does the same.
Every node run inserts a row into the EFFECTS SQLite file (one row per execution, so the
test can count runs) and records its business side effect once per idempotency key. An
observer writes every appended event there too, so the test can see what is durable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import time
from typing import Any

from accord.contracts.errors import AccordError
from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow import Graph, LogEvent, NodeContext, Route, Runtime


class Effects:
    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS runs (workflow_id TEXT, node TEXT)")
        self.db.execute("CREATE TABLE IF NOT EXISTS effects (key TEXT PRIMARY KEY)")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS observed (workflow_id TEXT, seq INT, type TEXT, "
            "node TEXT, PRIMARY KEY (workflow_id, seq))"
        )

    def ran(self, ctx: NodeContext) -> None:
        self.db.execute("INSERT INTO runs VALUES (?, ?)", (ctx.workflow_id, ctx.node))
        # The business write: keyed by an idempotency key, so a re-run is harmless.
        self.db.execute(
            "INSERT OR IGNORE INTO effects VALUES (?)", (f"{ctx.workflow_id}:{ctx.node}",)
        )

    def observed(self, event: LogEvent) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO observed VALUES (?, ?, ?, ?)",
            (event.workflow_id, event.seq, event.type.value, event.node),
        )


def build(effects: Effects, block: set[str], timeout_s: float | None) -> Graph:
    forever = asyncio.Event()

    async def step(ctx: NodeContext) -> Any:
        effects.ran(ctx)
        if ctx.node in block:
            await forever.wait()  # the test kills the process here
        return {"node": ctx.node}

    async def join(ctx: NodeContext) -> Any:
        effects.ran(ctx)
        if ctx.input.get("approval"):
            try:
                answer = ctx.interrupt(WaitingReason.APPROVAL, {"q": "ok?"}, timeout_s)
            except AccordError:
                return Route("expired")
            return Route("done", {"answer": answer.value})
        return Route("done", {"joined": sorted(ctx.inputs)})

    g = Graph("crash", "1")
    for name in "abcd":
        g.node(name, step)
    g.node("e", join).node("done", step).node("expired", step)
    g.edge("a", "b", "c", "d").join(["b", "c", "d"], "e")
    g.route("e", {"expired": "expired"}, default="done")
    return g


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("effects")
    parser.add_argument("mode", choices=["start", "recover", "resume"])
    parser.add_argument("ids")
    parser.add_argument("--block", default="")
    parser.add_argument("--approval", action="store_true")
    parser.add_argument("--timeout", type=float, default=None)
    args = parser.parse_args()
    effects = Effects(args.effects)
    ids = args.ids.split(",")
    runtime = Runtime(args.url, lease_ttl_s=1.0, auto_recover=False, timer_rescan_s=0.5)
    runtime.register(build(effects, set(filter(None, args.block.split(","))), args.timeout))

    async def observe(event: LogEvent) -> None:
        effects.observed(event)

    runtime.subscribe(observe)
    await runtime.open()
    if args.mode == "start":
        for workflow_id in ids:
            await runtime.start("crash", workflow_id, {"approval": args.approval})
        print("started", flush=True)
        await asyncio.Event().wait()
    if args.mode == "resume":
        for workflow_id in ids:
            snap = await runtime.snapshot(workflow_id)
            for pending in snap.interrupts:
                await runtime.resume(workflow_id, pending.interrupt_id, "approve", "boss")
    deadline = time.monotonic() + 90  # a failure waits this long (loaded CI, parallel workers)
    while True:  # the dead owner's lease expires within lease_ttl_s
        await runtime.recover()
        snaps = [await runtime.snapshot(w) for w in ids]
        if all(s.status in (Status.COMPLETED, Status.FAILED) for s in snaps):
            break
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    out = {
        s.workflow_id: {
            "status": s.status.value,
            "result": s.result,
            "events": [e.type.value for e in await runtime.log.read(s.workflow_id)],
        }
        for s in snaps
    }
    await runtime.close()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
